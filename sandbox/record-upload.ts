import { createHash } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES, readBody, sendJson } from './http-io';
import { PortalState } from './portal-state';

/** Where an attachRecord without content or URL tells the client to upload the file. */
export const UPLOAD_PREFIX = '/upload/record/';

/**
 * The portal's uploadUrl (how real portals behave "Recordings"): a POST of the file as multipart field `file`,
 * once per token, at most 32 MB like every POST; answers `{"result": {"FILE_ID"}}`.
 */
export async function handleRecordUpload(
  state: PortalState,
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
): Promise<void> {
  if (req.method !== 'POST') {
    return sendJson(res, 405, { error: 'METHOD_NOT_ALLOWED', error_description: 'POST the file' });
  }
  const body = await readBody(req);
  if (body === null) {
    return sendJson(res, 413, {
      error: 'REQUEST_ENTITY_TOO_LARGE',
      error_description: `a POST is at most ${MAX_BODY_BYTES} bytes`,
    });
  }
  let file: FormDataEntryValue | null = null;
  try {
    const form = await new Response(body as unknown as BodyInit, {
      headers: { 'content-type': req.headers['content-type'] ?? '' },
    }).formData();
    file = form.get('file');
  } catch {
    file = null;
  }
  if (file === null || typeof file === 'string') {
    return sendJson(res, 400, {
      error: 'INVALID_REQUEST',
      error_description: 'multipart field file is missing',
    });
  }
  const upload = state.calls.takeUpload(token);
  const call = upload && state.calls.get(upload.callId);
  if (!upload || !call) {
    return sendJson(res, 404, { error: 'NOT_FOUND', error_description: 'unknown or used upload address' });
  }
  const bytes = Buffer.from(await file.arrayBuffer());
  const stored = state.calls.attach(call, {
    FILENAME: upload.FILENAME,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    via: 'upload',
    at: Date.now(),
  });
  return sendJson(res, 200, { result: { FILE_ID: stored.FILE_ID } });
}
