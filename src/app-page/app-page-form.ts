import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { formParser } from '../auth/form-body.middleware';

/** The portal's post and the page's forms are a few fields. */
const FORM_LIMIT_BYTES = 16 * 1024;

/**
 * Form bodies of `/app` (Nest's global parser is off): flat fields only (`extended: false`), 413 past 16 KB,
 * 415 for another type (a form post of the page or the portal is always form-encoded).
 */
export function appPageFormBody() {
  const parse = formParser(
    express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: 100 }),
    `the form is larger than ${FORM_LIMIT_BYTES} bytes`,
  );
  return (request: Request, response: Response, next: NextFunction) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (!request.headers['transfer-encoding'] && length === 0) {
      request.body = {};
      return next();
    }
    parse(request, response, next);
  };
}

/** The posted form's fields (empty when the body is none). */
export function formOf(request: Request): Record<string, unknown> {
  const body: unknown = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}
