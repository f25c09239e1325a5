import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { randomBytes, randomUUID } from 'node:crypto';
import { Destination, EgressPolicy } from '../common/egress';
import { digest } from '../common/secrets';
import { checkLineRules } from '../common/lines';
import { PbxTokenRecord, PortalStore } from '../store/portal-store';
import { portalDialSettings, portalRecordingFetch } from './portal-dial';
import { followDestinations, portalFollowSettings } from './portal-follow';
import { PortalSettingsPatch } from './portal-settings.dto';

/** One refused setting: the field and what is wrong with it (never its value: some hold secrets). */
export interface SettingProblem {
  field: string;
  problems: string[];
}

/**
 * A portal's settings patch as `PATCH /v1/admin/portals/:portalId` and the application's page take it:
 * class-validator's rules (unknown fields refused), then the dial and recording download settings built as a
 * portal runtime builds them, and the PBX-following settings (`follow`) likewise, each destination under
 * `egress` (SPEC §8: a literal address in a refused range, credentials in clear). Nothing is resolved here:
 * `checkPortalSettings` does that after these checks. Returns the patch to store and the destinations it
 * names, or every problem by field.
 */
export function checkPortalSettingsShape(
  body: unknown,
  options: { production: boolean },
  egress: EgressPolicy,
):
  | { patch: PortalSettingsPatch; destinations: { field: string; destination: Destination }[] }
  | { errors: SettingProblem[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { errors: [{ field: 'body', problems: ['the body must be a JSON object of settings'] }] };
  }
  const patch = plainToInstance(PortalSettingsPatch, body);
  const problems = validateSync(patch, { whitelist: true, forbidNonWhitelisted: true });
  if (problems.length) {
    return {
      errors: problems.map((problem) => ({
        field: problem.property,
        problems: Object.values(problem.constraints ?? { unknown: 'is not a setting' }),
      })),
    };
  }
  const destinations: { field: string; destination: Destination }[] = [];
  if (patch.lines) {
    const lines = checkLineRules(patch.lines, 'lines');
    if ('problems' in lines) return { errors: [{ field: 'lines', problems: lines.problems }] };
    patch.lines = lines.rules;
  }
  if (patch.dial) {
    const dial = portalDialSettings(patch.dial, undefined, egress);
    if ('problems' in dial) return { errors: [{ field: 'dial', problems: dial.problems }] };
    if (dial.refusals.length) return { errors: [{ field: 'dial', problems: dial.refusals }] };
    destinations.push(...dial.destinations.map((destination) => ({ field: 'dial', destination })));
    patch.dial = Object.fromEntries(Object.entries(patch.dial).map(([name, value]) => [name, String(value)]));
  }
  if (patch.follow) {
    const follow = portalFollowSettings(patch.follow, { ...options, egress });
    if ('problems' in follow) return { errors: [{ field: 'follow', problems: follow.problems }] };
    destinations.push(
      ...followDestinations(follow.settings, egress).map((destination) => ({ field: 'follow', destination })),
    );
  }
  if (patch.recordingFetch) {
    const fetch = portalRecordingFetch(patch.recordingFetch, egress);
    if ('problems' in fetch) return { errors: [{ field: 'recordingFetch', problems: fetch.problems }] };
    patch.recordingFetch = fetch.settings;
    destinations.push(...fetch.destinations.map((destination) => ({ field: 'recordingFetch', destination })));
  }
  return { patch, destinations };
}

/**
 * `checkPortalSettingsShape`, then every named destination resolved now under `egress` (the check at save:
 * a name that resolves into a refused range is a 400; every connection checks it again). Problems name the
 * field and the host, never a credential.
 */
export async function checkPortalSettings(
  body: unknown,
  options: { production: boolean },
  egress: EgressPolicy,
): Promise<{ patch: PortalSettingsPatch } | { errors: SettingProblem[] }> {
  const checked = checkPortalSettingsShape(body, options, egress);
  if ('errors' in checked) return checked;
  const refused = await Promise.all(
    checked.destinations.map(async ({ field, destination }) => ({
      field,
      problem: await egress.checkNow(destination),
    })),
  );
  const errors: SettingProblem[] = [];
  for (const { field, problem } of refused) {
    if (!problem) continue;
    const known = errors.find((error) => error.field === field);
    const text = `${field}.${problem}`.replace(/^(\w+)\.\1\./, '$1.');
    if (known) known.problems.push(text);
    else errors.push({ field, problems: [text] });
  }
  return errors.length ? { errors } : { patch: checked.patch };
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
