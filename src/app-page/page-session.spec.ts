import { redactUrl } from '../logging/logging.module';
import { frameAncestors } from './page-responder';
import { installDigest, PageSessions, SESSION_IDLE_MS, SESSION_RECHECK_MS } from './page-session';

describe('the application page session', () => {
  const claims = {
    portalId: 'alpha',
    userId: 7,
    admin: false,
    lang: 'de',
    install: installDigest('installed 1'),
    auth: 'the-users-auth-id',
  };
  let now = 1_000_000;
  const sessions = new PageSessions('client-secret', () => now);

  it('carries the portal and user the portal confirmed, on any replica with the same secret', () => {
    const token = sessions.open(claims);
    expect(sessions.verify(token)).toMatchObject(claims);
    expect(new PageSessions('client-secret', () => now).verify(token)).toMatchObject(claims);
  });

  it('refuses a changed token, another deployment and an expired session; shows nothing it holds', () => {
    const token = sessions.open(claims);
    // Sealed: neither the AUTH_ID nor the claims can be read from the token, nor changed in it.
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('the-users-auth-id');
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('alpha');
    const bytes = Buffer.from(token, 'base64url');
    bytes[20] ^= 1;
    expect(sessions.verify(bytes.toString('base64url'))).toBeUndefined();
    expect(new PageSessions('another-secret', () => now).verify(token)).toBeUndefined();
    expect(sessions.verify('garbage')).toBeUndefined();
    expect(sessions.verify(undefined)).toBeUndefined();
    now += SESSION_IDLE_MS + 1;
    expect(sessions.verify(token)).toBeUndefined();
  });

  it('asks the portal again after five minutes, and only then', () => {
    const session = sessions.verify(sessions.open(claims))!;
    expect(sessions.recheckDue(session)).toBe(false);
    now += SESSION_RECHECK_MS;
    expect(sessions.recheckDue(session)).toBe(true);
    const demoted = sessions.verify(sessions.renew(sessions.rechecked({ ...session, admin: true }, false)))!;
    expect(demoted.admin).toBe(false);
    expect(sessions.recheckDue(demoted)).toBe(false);
    // The admin token's session (webhook mode) has no portal user to ask about.
    expect(sessions.recheckDue({ ...session, auth: undefined })).toBe(false);
  });

  it('renews for minutes, never past an hour after entry', () => {
    const start = now;
    let token = sessions.open(claims);
    for (let minute = 10; minute <= 70; minute += 10) {
      now = start + minute * 60_000;
      const session = sessions.verify(token);
      if (minute >= 60) expect(session).toBeUndefined();
      else token = sessions.renew(session!);
    }
  });

  it('issues and accepts nothing without a deployment secret', () => {
    const closed = new PageSessions(undefined, () => now);
    expect(closed.enabled).toBe(false);
    expect(closed.verify(sessions.open(claims))).toBeUndefined();
    expect(() => closed.open(claims)).toThrow();
  });

  it('lets only the portal frame the page', () => {
    expect(frameAncestors('https://portal.example.com/rest/', 'portal.example.com')).toBe(
      'https://portal.example.com portal.example.com',
    );
    expect(frameAncestors(undefined)).toBe("'none'");
    // A domain that would add CSP sources or directives is left out.
    expect(frameAncestors('https://p.example.com/rest/', "evil.test; script-src 'unsafe-inline'")).toBe(
      'https://p.example.com',
    );
  });

  it('never reaches a request log: a stale session path and a posted AUTH_ID are redacted', () => {
    // The page no longer puts the session in an address; a stale link of the old form is still redacted.
    const token = sessions.open(claims);
    expect(redactUrl(`/app/s/${token}/settings`)).toBe('/app/s/[Redacted]/settings');
    expect(redactUrl(`/app?AUTH_ID=abc&LANG=de&REFRESH_ID=def`)).toBe(
      '/app?AUTH_ID=[Redacted]&LANG=de&REFRESH_ID=[Redacted]',
    );
  });
});
