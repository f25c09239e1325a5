import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus, NotFoundException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { redactUrl } from './logging.module';

/**
 * The framework answers an unknown route `Cannot GET <url>`, query included: a PBX's token under a name
 * nobody foresaw (`?key=…`) would come back in the body. The same answer with the URL as the logs write it
 * (allowed query values only). Every other 404, written by a controller, is passed on as it is.
 */
@Catch(NotFoundException)
export class RouteNotFoundFilter implements ExceptionFilter {
  catch(exception: NotFoundException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const request = host.switchToHttp().getRequest<Request>();
    const body = exception.getResponse();
    const message = typeof body === 'object' ? (body as { message?: unknown }).message : body;
    if (typeof message === 'string' && message.startsWith(`Cannot ${request.method} `)) {
      response.status(HttpStatus.NOT_FOUND).json({
        statusCode: HttpStatus.NOT_FOUND,
        message: `Cannot ${request.method} ${redactUrl(request.originalUrl ?? request.url)}`,
        error: 'Not Found',
      });
    } else response.status(exception.getStatus()).json(body);
  }
}
