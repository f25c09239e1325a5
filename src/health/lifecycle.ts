import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ServerSettings } from '../config/settings';

/**
 * The shutdown sequence on SIGTERM (Nest runs beforeApplicationShutdown, then closes the HTTP server, then
 * onApplicationShutdown): readiness turns false at once; for SHUTDOWN_DELAY_MS the bridge keeps serving
 * while load balancers notice; every response from then on says `Connection: close`, so keep-alive PBX
 * connections end after their request in flight instead of holding the server open.
 */
@Injectable()
export class Lifecycle implements BeforeApplicationShutdown {
  private closing = false;
  private readonly logger = new Logger('Lifecycle');

  constructor(private readonly server: ServerSettings) {}

  get shuttingDown(): boolean {
    return this.closing;
  }

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    this.closing = true;
    this.logger.log(
      `shutting down (${signal ?? 'close'}): readiness is false; finishing requests and the batch in flight`,
    );
    if (this.server.shutdownDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.server.shutdownDelayMs));
    }
  }

  /** Express middleware: no new keep-alive once the shutdown began. */
  readonly closeConnectionsWhenStopping = (
    _request: Request,
    response: Response,
    next: NextFunction,
  ): void => {
    if (this.closing) response.setHeader('Connection', 'close');
    next();
  };
}
