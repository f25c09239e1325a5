import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { verifyNesting } from './body-nesting';
import { PbxTokenGuard } from './pbx-token.guard';

/** `[{"extensions": […]}]`: a list of events, each an object whose only nested field is a list of strings. */
const EVENT_BODY_DEPTH = 3;

/**
 * JSON bodies for the PBX API with the answers the API contract (docs/API.md) asks for: 401 before anything of the body is read,
 * 415 unless the Content-Type is JSON, 413 past the size limit, 400 for JSON that does not parse or nests
 * deeper than events do. Express's own handler would answer HTML.
 */
export function pbxJsonBody(limitBytes: number, tokens: PbxTokenGuard) {
  const parse = express.json({
    limit: limitBytes,
    strict: false,
    type: () => true,
    verify: verifyNesting(EVENT_BODY_DEPTH),
  });
  // Async: Nest's middleware proxy turns a rejection (the 401) into its answer, as it does a throw.
  return async (request: Request, response: Response, next: NextFunction) => {
    if (!['POST', 'PUT', 'PATCH'].includes(request.method)) return next();
    await tokens.admit(request);
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
      if (error.type === 'entity.too.deep') {
        return reply(
          response,
          HttpStatus.BAD_REQUEST,
          `the body nests arrays and objects more than ${EVENT_BODY_DEPTH} deep: ` +
            'send one event (a JSON object whose only list is extensions) or a list of them; nothing was stored',
        );
      }
      reply(response, HttpStatus.BAD_REQUEST, 'the body is not valid JSON');
    });
  };
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
