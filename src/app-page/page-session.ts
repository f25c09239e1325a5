import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** A page's session lasts this long after its last page, and never longer than SESSION_MAX_MS after entry. */
export const SESSION_IDLE_MS = 15 * 60_000;
const SESSION_MAX_MS = 60 * 60_000;

/** Who the page serves: the portal and user the portal confirmed, whether an administrator, in what language. */
export interface PageSession {
  portalId: string;
  userId: number;
  admin: boolean;
  lang: string;
  /** When the portal confirmed the user (ms epoch): the session ends SESSION_MAX_MS after it at the latest. */
  since: number;
  expiresAt: number;
}

/**
 * The page's session without cookies (a frame on another site gets no third-party cookies): an HMAC-signed
 * token carried in every form and link. Its key is derived (HKDF) from the deployment's own secret, so every
 * replica accepts what another issued, and nothing else signed with that secret verifies as a session.
 */
export class PageSessions {
  /** Undefined without a deployment secret: then no session is issued or accepted (the page is closed). */
  private readonly key?: Buffer;

  constructor(
    secret: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    if (secret) this.key = Buffer.from(hkdfSync('sha256', secret, 'pbx-bridge app page', 'session v1', 32));
  }

  /** Whether sessions can be issued: the deployment has a secret to key them with. */
  get enabled(): boolean {
    return this.key !== undefined;
  }

  /** A session for a user the portal just confirmed. */
  open(session: Omit<PageSession, 'since' | 'expiresAt'>): string {
    const now = this.now();
    return this.sign({ ...session, since: now, expiresAt: now + SESSION_IDLE_MS });
  }

  /** The same session for a further SESSION_IDLE_MS (bounded by its start). */
  renew(session: PageSession): string {
    const expiresAt = Math.min(this.now() + SESSION_IDLE_MS, session.since + SESSION_MAX_MS);
    return this.sign({ ...session, expiresAt });
  }

  /** The session a token carries, or undefined when forged, altered or expired. */
  verify(token: string): PageSession | undefined {
    const [body, mac] = token.split('.');
    if (!this.key || !body || !mac || body.length > 1000) return undefined;
    const expected = this.mac(body);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const session = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as PageSession;
      return session.expiresAt > this.now() ? session : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(session: PageSession): string {
    const body = Buffer.from(JSON.stringify(session)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  private mac(body: string): Buffer {
    if (!this.key) throw new Error('the application page has no secret to sign sessions with');
    return createHmac('sha256', this.key).update(body).digest();
  }
}
