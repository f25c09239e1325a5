import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** A page's session lasts this long after its last page, and never longer than SESSION_MAX_MS after entry. */
export const SESSION_IDLE_MS = 15 * 60_000;
const SESSION_MAX_MS = 60 * 60_000;
/** The portal is asked again whether the user administers it when its last answer is older than this. */
export const SESSION_RECHECK_MS = 5 * 60_000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Who the page serves: the portal and user the portal confirmed, whether an administrator, in what language. */
export interface PageSession {
  portalId: string;
  userId: number;
  admin: boolean;
  lang: string;
  /**
   * The portal's install the session was opened under (a digest of `PagePortal.installation`): a reinstall
   * ends it.
   */
  install: string;
  /**
   * The portal's `AUTH_ID` the user entered with (never shown, sealed with the session), to ask the portal
   * again whether the user still administers it; absent in webhook mode (the admin token signed in).
   */
  auth?: string;
  /** When the portal confirmed the user (ms epoch): the session ends SESSION_MAX_MS after it at the latest. */
  since: number;
  /** When the portal last said whether the user is an administrator. */
  checkedAt: number;
  expiresAt: number;
}

/** What identifies a portal's install in a session: a short digest of its installation value. */
export function installDigest(installation: string): string {
  return createHash('sha256').update(installation).digest('base64url').slice(0, 22);
}

/**
 * The page's session without cookies (a frame on another site gets no third-party cookies): a sealed
 * (AES-256-GCM) token carried in a hidden field of every form, never in an address. Its key is derived
 * (HKDF) from the deployment's own secret, so every replica accepts what another issued, nothing else made
 * with that secret opens as a session, and what it holds (the user's AUTH_ID) is unreadable outside.
 */
export class PageSessions {
  /** Undefined without a deployment secret: then no session is issued or accepted (the page is closed). */
  private readonly key?: Buffer;

  constructor(
    secret: string | undefined,
    private readonly now: () => number = Date.now,
    private readonly recheckMs = SESSION_RECHECK_MS,
  ) {
    if (secret) this.key = Buffer.from(hkdfSync('sha256', secret, 'pbx-bridge app page', 'session v2', 32));
  }

  /** Whether sessions can be issued: the deployment has a secret to key them with. */
  get enabled(): boolean {
    return this.key !== undefined;
  }

  /** A session for a user the portal just confirmed. */
  open(session: Omit<PageSession, 'since' | 'checkedAt' | 'expiresAt'>): string {
    const now = this.now();
    return this.seal({ ...session, since: now, checkedAt: now, expiresAt: now + SESSION_IDLE_MS });
  }

  /** The same session for a further SESSION_IDLE_MS (bounded by its start). */
  renew(session: PageSession): string {
    const expiresAt = Math.min(this.now() + SESSION_IDLE_MS, session.since + SESSION_MAX_MS);
    return this.seal({ ...session, expiresAt });
  }

  recheckDue(session: PageSession): boolean {
    return session.auth !== undefined && this.now() - session.checkedAt >= this.recheckMs;
  }

  /** The session after the portal answered again: `admin` as it said now. */
  rechecked(session: PageSession, admin: boolean): PageSession {
    return { ...session, admin, checkedAt: this.now() };
  }

  /** The session a token carries, or undefined when forged, altered or expired. */
  verify(token: unknown): PageSession | undefined {
    if (!this.key || typeof token !== 'string' || token.length > 4000) return undefined;
    const sealed = Buffer.from(token, 'base64url');
    if (sealed.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]);
      const session = JSON.parse(plain.toString('utf8')) as PageSession;
      return session.expiresAt > this.now() && this.now() < session.since + SESSION_MAX_MS
        ? session
        : undefined;
    } catch {
      return undefined;
    }
  }

  private seal(session: PageSession): string {
    if (!this.key) throw new Error('the application page has no secret to seal sessions with');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(session), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }
}
