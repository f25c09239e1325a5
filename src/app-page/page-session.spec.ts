import { redactUrl } from '../logging/logging.module';
import { frameAncestors } from './app-page.controller';
import { PageSessions, SESSION_IDLE_MS } from './page-session';

describe('the application page session', () => {
  const claims = { portalId: 'alpha', userId: 7, admin: false, lang: 'de' };
  let now = 1_000_000;
  const sessions = new PageSessions('client-secret', () => now);

  it('carries the portal and user the portal confirmed, on any replica with the same secret', () => {
    const token = sessions.open(claims);
    expect(sessions.verify(token)).toMatchObject(claims);
    expect(new PageSessions('client-secret', () => now).verify(token)).toMatchObject(claims);
  });

  it('refuses a changed claim, another deployment and an expired session', () => {
    const token = sessions.open(claims);
    const [, mac] = token.split('.');
    const promoted = Buffer.from(
      JSON.stringify({ ...claims, admin: true, since: now, expiresAt: now + 1 }),
    ).toString('base64url');
    expect(sessions.verify(`${promoted}.${mac}`)).toBeUndefined();
    const otherPortal = Buffer.from(JSON.stringify({ ...claims, portalId: 'beta' })).toString('base64url');
    expect(sessions.verify(`${otherPortal}.${mac}`)).toBeUndefined();
    expect(new PageSessions('another-secret', () => now).verify(token)).toBeUndefined();
    expect(sessions.verify('garbage')).toBeUndefined();
    now += SESSION_IDLE_MS + 1;
    expect(sessions.verify(token)).toBeUndefined();
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

  it('never reaches a request log: the session path and a posted AUTH_ID are redacted', () => {
    const token = sessions.open(claims);
    expect(redactUrl(`/app/s/${token}/settings`)).toBe('/app/s/[Redacted]/settings');
    expect(redactUrl(`/app?AUTH_ID=abc&LANG=de&REFRESH_ID=def`)).toBe(
      '/app?AUTH_ID=[Redacted]&LANG=de&REFRESH_ID=[Redacted]',
    );
  });
});
