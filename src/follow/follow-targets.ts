import { Destination, EgressPolicy } from '../common/egress';
import { FollowSettings } from '../config/settings';
import { AmiTarget, parseAmiTarget } from './ami/ami-session';
import { EslTarget, parseEslTarget } from './esl/esl-session';
import { CdrTarget, parseCdrTarget } from './ledger/cdr-source';

/** Where a FollowSettings' followers connect: each a Destination of the egress policy, with its login. */
export interface FollowTargets {
  ami?: AmiTarget;
  esl?: EslTarget;
  cdr?: CdrTarget;
}

/**
 * The targets of a FollowSettings under `egress` (SPEC §8: a portal's settings in multi mode may not reach
 * this deployment or its network). Problems name the variable and the rule, never a value; nothing is
 * resolved or connected to here.
 */
export function followTargetsOf(
  settings: FollowSettings,
  egress: EgressPolicy,
): { targets: FollowTargets } | { problems: string[] } {
  const targets: FollowTargets = {};
  const problems: string[] = [];
  if (settings.mode === 'ami' || settings.mode === 'esl') {
    const { mode } = settings;
    const url = mode === 'ami' ? settings.amiUrl : settings.eslUrl;
    const target = url ? (mode === 'ami' ? parseAmiTarget : parseEslTarget)(url, egress) : undefined;
    if (!target) problems.push(`${mode.toUpperCase()}_URL: required when PBX_EVENTS=${mode}`);
    else if ('problem' in target) problems.push(target.problem);
    else targets[mode] = target;
  }
  if (settings.cdrUrl) {
    const cdr = parseCdrTarget(settings.cdrUrl, egress);
    if ('problem' in cdr) problems.push(cdr.problem);
    else targets.cdr = cdr;
  }
  return problems.length ? { problems } : { targets };
}

/** The destinations of a FollowTargets, for a check of their names (`EgressPolicy.checkNow`). */
export function destinationsOf(targets: FollowTargets): Destination[] {
  return [targets.ami, targets.esl, targets.cdr].flatMap((target) => (target ? [target.destination] : []));
}
