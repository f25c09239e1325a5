import { EgressRefused } from '../common/egress';
import { testConnection } from './connection-test';

const where = { what: 'Asterisk Manager Interface', label: 'pbx.example.com:5039', timeoutMs: 30 };

describe('testConnection: the page\'s "test connection" helper', () => {
  it('is ok when the attempt resolves', async () => {
    expect(await testConnection(() => Promise.resolve(), where)).toEqual({ ok: true });
  });

  it('says login refused only when the server spoke the protocol, without its words', async () => {
    const refused = Object.assign(new Error("Access denied for user 'root'@'10.0.0.1'"), {
      credentialsRefused: true as const,
    });
    const outcome = await testConnection(() => Promise.reject(refused), where);
    expect(outcome).toEqual({
      ok: false,
      reason:
        'login refused: the Asterisk Manager Interface at pbx.example.com:5039 refused the user name or password',
    });
  });

  it('says not allowed for a destination the egress gate refused', async () => {
    const outcome = await testConnection(() => Promise.reject(new EgressRefused('x')), where);
    expect(outcome).toEqual({
      ok: false,
      reason: expect.stringMatching(/^not allowed: pbx\.example\.com:5039 /),
    });
  });

  it('answers a refused port, another protocol and a silent one alike, never quoting the error', async () => {
    let finish: (error: Error) => void = () => undefined;
    const answers = await Promise.all([
      testConnection(
        () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
        where,
      ),
      testConnection(
        () => Promise.reject(new Error('pbx.example.com:5039 is not an Asterisk Manager Interface')),
        where,
      ),
      testConnection(() => new Promise((_, reject) => (finish = reject)), where),
    ]);
    finish(new Error('late'));
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(answers[0]).toEqual({
      ok: false,
      reason:
        'unreachable: no Asterisk Manager Interface answered at pbx.example.com:5039 within 30 ms (nothing listens there, something else does, or TLS failed)',
    });
  });
});
