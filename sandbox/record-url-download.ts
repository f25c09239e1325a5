import { createHash } from 'node:crypto';
import { parseFormParams } from './http-io';
import { Params } from './params';

/** What the portal got when it tried a RECORD_URL (how real portals behave "Recordings": once, while answering). */
export type RecordUrlDownload = { sha256: string; bytes: number } | { error: string };

const ATTACH = 'telephony.externalcall.attachrecord';
const MAX_BYTES = 32 * 1024 * 1024;
const TIMEOUT_MS = 5000;

/**
 * The RECORD_URLs of a request's attachRecord commands (the method itself, or inside a batch), each tried
 * once before the commands run (method handlers are synchronous); the handler then reads the outcome.
 */
export async function downloadRecordUrls(
  method: string,
  params: Params,
  results: Map<string, RecordUrlDownload>,
): Promise<void> {
  const urls: string[] = [];
  const add = (value: unknown) => typeof value === 'string' && value !== '' && urls.push(value);
  if (method.toLowerCase() === ATTACH) add(params.RECORD_URL);
  if (method === 'batch' && params.cmd && typeof params.cmd === 'object') {
    for (const text of Object.values(params.cmd as Record<string, unknown>)) {
      if (typeof text !== 'string') continue;
      const [path, query = ''] = text.split(/\?(.*)/s);
      if (
        path
          .replace(/^\/+/, '')
          .replace(/\.json$/i, '')
          .toLowerCase() === ATTACH
      ) {
        add(parseFormParams(query).RECORD_URL);
      }
    }
  }
  await Promise.all(urls.map(async (url) => results.set(url, await download(url))));
}

async function download(url: string): Promise<RecordUrlDownload> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!response.ok) return { error: `HTTP ${response.status}` };
    const bytes = Buffer.from(await response.arrayBuffer());
    if (bytes.length > MAX_BYTES) return { error: 'the file is too large' };
    return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
