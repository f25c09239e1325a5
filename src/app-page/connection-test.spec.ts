import { failureKind, redact, testConnection } from './connection-test';

describe('testConnection: the page\'s "test connection" helper', () => {
  it('is ok when the attempt resolves, the described failure when it rejects', async () => {
    expect(await testConnection(() => Promise.resolve(), { secrets: [], describe: () => 'x' })).toEqual({
      ok: true,
    });
    const failed = await testConnection(() => Promise.reject(new Error('no')), {
      secrets: [],
      describe: (error) => `failed: ${(error as Error).message}`,
    });
    expect(failed).toEqual({ ok: false, reason: 'failed: no' });
  });

  it('gives up at its deadline; a late end of the attempt is swallowed', async () => {
    let finish: (error: Error) => void = () => undefined;
    const outcome = await testConnection(() => new Promise((_, reject) => (finish = reject)), {
      secrets: [],
      describe: () => 'never',
      timeoutMs: 20,
    });
    expect(outcome).toEqual({ ok: false, reason: 'timeout: no answer within 20 ms' });
    finish(new Error('late'));
  });

  it('cuts every secret (and its URL-encoded form) out of the reason', async () => {
    const outcome = await testConnection(() => Promise.reject(new Error('x')), {
      secrets: ['p@ss/word', undefined, 'ab'],
      describe: () => 'login refused for p@ss/word and p%40ss%2Fword, ab stays',
    });
    expect(outcome).toEqual({ ok: false, reason: 'login refused for *** and ***, ab stays' });
    expect(redact('nothing here', ['secret'])).toBe('nothing here');
  });

  it.each([
    ['ECONNREFUSED', 'ECONNREFUSED tcp://10.0.0.5:5038', 'refused'],
    [undefined, 'tcp://10.0.0.5:5038 closed the connection', 'refused'],
    ['ENOTFOUND', 'getaddrinfo ENOTFOUND pbx.invalid', 'unknown host'],
    [undefined, 'login refused for user crm at tls://pbx:5039: Authentication failed', 'bad credentials'],
    ['ER_ACCESS_DENIED_ERROR', "Access denied for user 'cdr'@'10.0.0.1'", 'bad credentials'],
    [undefined, 'no Manager banner from tcp://pbx:5038 within 5000 ms', 'timeout'],
    [undefined, 'ERR_SSL_WRONG_VERSION_NUMBER tls://pbx:5039', 'TLS'],
    [undefined, 'DEPTH_ZERO_SELF_SIGNED_CERT tls://pbx:5039', 'TLS'],
    ['ER_NO_SUCH_TABLE', "Table 'asteriskcdrdb.cdr' doesn't exist", 'failed'],
  ])('names %s "%s" as %s', (code, message, kind) => {
    expect(failureKind(code, message)).toBe(kind);
  });
});
