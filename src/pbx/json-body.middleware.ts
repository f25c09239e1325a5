import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';

/**
 * JSON bodies for the PBX API with the answers SPEC.md asks for: 415 unless the Content-Type is JSON,
 * 413 past the size limit, 400 for JSON that does not parse. Express's own handler would answer HTML.
 */
export function pbxJsonBody(limitBytes: number) {
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true });
  return (request: Request, response: Response, next: NextFunction) => {
    if (!['POST', 'PUT', 'PATCH'].includes(request.method)) return next();
    if (!request.is(['application/json', 'application/*+json'])) {
      return reply(response, HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'Content-Type must be application/json');
    }
    parse(request, response, (error?: { type?: string }) => {
      if (!error) return next();
      if (error.type === 'entity.too.large') {
        return reply(response, HttpStatus.PAYLOAD_TOO_LARGE, `the body is larger than ${limitBytes} bytes`);
      }
      if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported') {
        return reply(response, HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'the body must be UTF-8 JSON');
      }
      reply(response, HttpStatus.BAD_REQUEST, 'the body is not valid JSON');
    });
  };
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
