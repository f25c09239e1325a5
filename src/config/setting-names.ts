import { DEPLOYMENT_SETTINGS } from './deployment';
import { PORTAL_SETTINGS } from './portal-settings-schema';
import { Declared, Scope, ValuesOf } from './setting';

/** Every variable the bridge reads, in .env.example's order: the deployment's, then a portal's. */
export const SETTING_DECLARATIONS = { ...DEPLOYMENT_SETTINGS, ...PORTAL_SETTINGS } as const;

export type SettingName = keyof typeof SETTING_DECLARATIONS;
export type DeploymentSettingName = keyof typeof DEPLOYMENT_SETTINGS;
export type PortalSettingName = keyof typeof PORTAL_SETTINGS;

/** Each variable's value as AppConfig holds it. */
export type SettingValues = ValuesOf<typeof SETTING_DECLARATIONS>;

const namesOf = <N extends string>(scope: Scope) =>
  Object.freeze(
    (Object.entries(SETTING_DECLARATIONS) as [N, Declared<unknown>][])
      .filter(([, declared]) => declared.scope === scope)
      .map(([name]) => name),
  );

export const DEPLOYMENT_SETTING_NAMES: readonly DeploymentSettingName[] = namesOf('deployment');
export const PORTAL_SETTING_NAMES: readonly PortalSettingName[] = namesOf('portal');

/** The variables B24_APP_MODE=multi refuses (each portal sets its own), with the reason. */
export const SINGLE_PORTAL_ONLY: Readonly<Partial<Record<SettingName, string>>> = Object.freeze(
  Object.fromEntries(
    (Object.entries(SETTING_DECLARATIONS) as [SettingName, Declared<unknown>][]).flatMap(
      ([name, declared]) => (declared.refusedInMulti ? [[name, declared.refusedInMulti]] : []),
    ),
  ),
);

/**
 * The variables whose values are or hold credentials (declared with `secret`): deployments take them from a
 * secret store, never from plain configuration (k8s/base/secrets.env.example, deploy/bridge.env.example).
 */
export const SECRET_SETTING_NAMES: readonly SettingName[] = Object.freeze(
  (Object.entries(SETTING_DECLARATIONS) as [SettingName, Declared<unknown>][])
    .filter(([, declared]) => declared.secret === true)
    .map(([name]) => name),
);
