import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { randomBytes, randomUUID } from 'node:crypto';
import { EgressPolicy } from '../common/egress';
import { digest } from '../common/secrets';
import { PbxTokenRecord, PortalStore } from '../store/portal-store';
import { portalDialSettings, portalRecordingFetch } from './portal-dial';
import { portalFollowSettings } from './portal-follow';
import { PortalSettingsPatch } from './portal-settings.dto';

/** One refused setting: the field and what is wrong with it (never its value: some hold secrets). */
export interface SettingProblem {
  field: string;
  problems: string[];
}

/**
 * A portal's settings patch as `PATCH /v1/admin/portals/:portalId` and the application's page take it:
 * class-validator's rules (unknown fields refused), then the dial and recording download settings built as a
 * portal runtime builds them, and the PBX-following settings (`follow`) likewise. Returns the patch to store, or every problem by field.
 */
export function checkPortalSettings(
  body: unknown,
  options: { production: boolean; egress: EgressPolicy },
): { patch: PortalSettingsPatch } | { errors: SettingProblem[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { errors: [{ field: 'body', problems: ['the body must be a JSON object of settings'] }] };
  const patch = plainToInstance(PortalSettingsPatch, body);
  const problems = validateSync(patch, { whitelist: true, forbidNonWhitelisted: true });
  if (problems.length)
    return {
      errors: problems.map((problem) => ({
        field: problem.property,
        problems: Object.values(problem.constraints ?? { unknown: 'is not a setting' }),
      })),
    };
  if (patch.dial) {
    const dial = portalDialSettings(patch.dial, undefined);
    if ('problems' in dial) return { errors: [{ field: 'dial', problems: dial.problems }] };
    patch.dial = Object.fromEntries(Object.entries(patch.dial).map(([name, value]) => [name, String(value)]));
  }
  if (patch.follow) {
    const follow = portalFollowSettings(patch.follow, options);
    if ('problems' in follow) return { errors: [{ field: 'follow', problems: follow.problems }] };
  }
  if (patch.recordingFetch) {
    const fetch = portalRecordingFetch(patch.recordingFetch);
    if ('problems' in fetch) return { errors: [{ field: 'recordingFetch', problems: fetch.problems }] };
    patch.recordingFetch = fetch.settings;
  }
  return { patch };
}

/**
 * A new PBX token of the portal: returned once, stored only as its SHA-256 digest. Undefined when the portal
 * is unknown.
 */
export async function createPbxToken(
  portals: PortalStore,
  portalId: string,
  label: string | undefined,
): Promise<{ record: PbxTokenRecord; token: string } | undefined> {
  // 32 random bytes: a token nobody guesses, so one SHA-256 (no slow hash) keeps it safe at rest.
  const token = `pbx_${randomBytes(32).toString('base64url')}`;
  const record = { id: randomUUID(), portalId, label, createdAt: Date.now() };
  const stored = await portals.addPbxToken({ ...record, digest: digest(token).toString('hex') });
  return stored ? { record, token } : undefined;
}
