import type { LoggerService } from '@nestjs/common';

/**
 * Nest's own start-up chatter: a line per module initialised and per route mapped (about 60 lines), which
 * says nothing an operator acts on. It goes out at debug level; `LOG_LEVEL=debug` shows it again.
 */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** The application's logger, with Nest's start-up lines moved from info to debug; everything else as is. */
export class FrameworkQuietLogger implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context) && this.inner.debug) {
      this.inner.debug(message, ...optionalParams);
    } else this.inner.log(message, ...optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.error(message, ...optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.warn(message, ...optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.debug?.(message, ...optionalParams);
  }

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.inner.verbose?.(message, ...optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    (this.inner.fatal ?? this.inner.error).call(this.inner, message, ...optionalParams);
  }
}
