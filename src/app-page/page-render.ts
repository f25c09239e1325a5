import { ConnectionOutcome } from './connection-test';
import { FollowAddress } from './follow-test';
import { PageText } from './page-text';
import { ConnectionLine, PageEmployee, PageSettings, PageToken } from './page-source';
import { DIAL_PLAIN } from './page-views';
import { esc } from './page-html';
import { callsSection as callsList, PageCall } from './page-calls';

export type { PageCall } from './page-calls';

export interface PageModel {
  text: PageText;
  lang: string;
  /** The sealed session, carried in a hidden field of every form (never in an address). */
  session: string;
  portal: { portalId: string; domain: string };
  user: { userId: number; name: string; admin: boolean };
  connection: ConnectionLine[];
  calls: PageCall[];
  /** The zone today's calls' times are shown in (the portal's when known); unset: the bridge's (TZ). */
  timeZone?: string;
  employees: PageEmployee[] | undefined;
  unmatched: string[];
  tokens: PageToken[] | null;
  settings: PageSettings;
  /** A token just created: shown in this answer only. */
  newToken?: string;
  notice?: string;
  /** Errors of the last settings post, by field (`defaultCountry`, `dial.AMI_URL`…), shown beside it. */
  errors: Record<string, string[]>;
  /** The values of a refused settings post, shown again so nothing typed is lost (never a dial address). */
  entered?: Record<string, string>;
  testResult?: { ok: boolean; reason?: string };
  /** The PBX-events "test connection": each address's outcome, shown beside its field. */
  followTests?: Partial<Record<FollowAddress, ConnectionOutcome>>;
  /** Sections drawn elsewhere (setup-render.ts, lines-render.ts): the setup's link, its first step, the lines. */
  sections?: { link?: string; top?: string; lines?: string };
}

export { esc } from './page-html';

/** The document around a body: one stylesheet of the bridge's own, nothing else loaded. */
export function documentOf(lang: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="${esc(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)}</title>
<link rel="stylesheet" href="/app/page.css">
</head>
<body>
${body}
</body>
</html>
`;
}

/**
 * A short page: an error (`problem`, announced), or a prompt drawn as one (`prompt`: the admin token's
 * sign-in, what to set to turn the page on), under `heading` (the page's title unless said).
 */
export function messagePage(
  text: PageText,
  lang: string,
  message: string,
  extra = '',
  options: { kind?: 'problem' | 'prompt'; heading?: string } = {},
): string {
  const shown =
    options.kind === 'prompt'
      ? `<p class="prompt">${esc(message)}</p>`
      : `<p class="problem" role="alert">${esc(message)}</p>`;
  const heading = options.heading ?? text.title;
  return documentOf(lang, text.title, `<main><h1>${esc(heading)}</h1>${shown}${extra}</main>`);
}

export function renderPage(model: PageModel): string {
  const { text } = model;
  // The session rides in every form's body, never in an address: ingress and proxy logs keep addresses.
  const base = '/app';
  const parts = [
    `<header><h1>${esc(text.title)}</h1>`,
    `<p>${esc(text.portal)}: <strong>${esc(model.portal.domain)}</strong> · <span id="signed-in">${esc(signedIn(model))}</span>` +
      `${model.user.admin ? ` · ${esc(text.admin)}` : ''}</p>`,
    model.user.admin ? '' : `<p class="note" id="read-only">${esc(text.readOnly)}</p>`,
    `<form method="post" action="${base}/view" class="inline"><button type="submit" id="refresh">${esc(text.refresh)}</button></form>`,
    model.sections?.link ?? '',
    `</header><main>`,
    model.notice ? `<p class="notice" role="status">${esc(model.notice)}</p>` : '',
    model.sections?.top ?? '',
    connectionSection(model),
    callsSection(model, base),
    model.sections?.lines ?? '',
    employeesSection(model),
    model.tokens ? tokensSection(model, base) : '',
    settingsSection(model, base),
    followSection(model, base),
    `</main>`,
  ];
  const held = `<input type="hidden" name="session" value="${esc(model.session)}">`;
  const body = parts
    .join('\n')
    .replace(/<form method="post" action="\/app[^"]*"[^>]*>/g, (form) => form + held);
  return documentOf(model.lang, text.title, body);
}

/** The events line as a sentence: how the portal's events come, and the line calls are filed under. */
function eventsSentence(text: PageText, events: NonNullable<ConnectionLine['events']>): string {
  const how =
    events.mode === 'offline'
      ? text.eventsOffline
      : events.mode === 'online'
        ? text.eventsOnline
        : text.eventsWebhook;
  const mode = events.bound ? `${how} (${text.eventsBoundCount.replace('{n}', String(events.bound))})` : how;
  return (events.line ? text.eventsOnLine : text.eventsNoLine)
    .replace('{mode}', mode)
    .replace('{line}', events.line ?? '');
}

/** Who is signed in: the admin token (webhook mode, user 0), else the portal user by name, else by id. */
function signedIn({ text, user }: PageModel): string {
  if (user.userId === 0) return text.signedInAdminToken;
  return `${text.signedInAs} ${user.name || text.userNumber.replace('{id}', String(user.userId))}`;
}

function connectionSection({ text, connection }: PageModel): string {
  const rows = connection.map((line) => {
    const state = line.ok === null ? text.notConfigured : line.ok ? text.ok : text.failed;
    const mark = line.ok === null ? 'off' : line.ok ? 'ok' : 'bad';
    const detail = line.events
      ? eventsSentence(text, line.events)
      : line.detail === 'uninstalled'
        ? text.uninstalled
        : line.ok === false && line.detail
          ? `${text.reason}: ${line.detail}`
          : line.detail;
    return `<tr><th scope="row">${esc(text[line.key])}</th><td><span class="state ${mark}">${esc(state)}</span> <span class="detail">${esc(detail)}</span></td></tr>`;
  });
  return `<section id="connection"><h2>${esc(text.connection)}</h2><table>${rows.join('')}</table></section>`;
}

function callsSection(model: PageModel, base: string): string {
  return callsList(
    {
      text: model.text,
      lang: model.lang,
      calls: model.calls,
      employees: model.employees,
      admin: model.user.admin,
      timeZone: model.timeZone,
    },
    base,
  );
}

function employeesSection({ text, employees, unmatched }: PageModel): string {
  const list = employees
    ? `<div class="scroll"><table><thead><tr><th scope="col">${esc(text.employee)}</th><th scope="col">${esc(text.extension)}</th></tr></thead><tbody>${employees
        .map(
          (employee) =>
            `<tr${employee.extension ? '' : ' class="missing"'}><td>${esc(employee.name)} <span class="detail">#${employee.id}</span></td><td>${employee.extension ? esc(employee.extension) : `<em>${esc(text.none)}</em>`}</td></tr>`,
        )
        .join('')}</tbody></table></div>`
    : `<p class="problem">${esc(text.employeesUnreadable)}</p>`;
  const strays = unmatched.length
    ? `<h3>${esc(text.unmatched)}</h3><ul id="unmatched">${unmatched.map((number) => `<li>${esc(number)}</li>`).join('')}</ul>`
    : '';
  return `<section id="employees"><h2>${esc(text.employees)}</h2>${list}${strays}</section>`;
}

function tokensSection(model: PageModel, base: string): string {
  const { text } = model;
  const tokens = model.tokens ?? [];
  const fresh = model.newToken
    ? `<div class="notice" role="status"><p>${esc(text.tokenOnce)}</p><p><output id="new-token">${esc(model.newToken)}</output></p></div>`
    : '';
  const rows = tokens.map((token) => {
    if (token.fromEnvironment) {
      return `<tr class="from-env"><td>${esc(token.label ?? '')}</td><td>${esc(text.tokenFromEnv)}</td><td></td></tr>`;
    }
    const revoke = model.user.admin
      ? `<form method="post" action="${base}/tokens/${encodeURIComponent(token.id)}/revoke"><button type="submit" aria-label="${esc(`${text.revoke} ${token.label ?? token.id}`)}">${esc(text.revoke)}</button></form>`
      : '';
    return `<tr><td>${esc(token.label ?? '—')}</td><td>${esc(token.createdAt.slice(0, 16).replace('T', ' '))}</td><td>${revoke}</td></tr>`;
  });
  const table = tokens.length
    ? `<div class="scroll"><table><thead><tr><th scope="col">${esc(text.label)}</th><th scope="col">${esc(text.created)}</th><th scope="col"><span class="hidden">${esc(text.revoke)}</span></th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`
    : `<p>${esc(text.noTokens)}</p>`;
  const create = model.user.admin
    ? `<form method="post" action="${base}/tokens" class="inline"><label for="token-label">${esc(text.label)}</label><input id="token-label" name="label" maxlength="100"><button type="submit">${esc(text.createToken)}</button></form>`
    : '';
  return `<section id="tokens"><h2>${esc(text.tokens)}</h2>${fresh}${table}${create}</section>`;
}

/** Problems of a form's `prefix.NAME` fields that no field of `shown` carries: shown beside its mode. */
function strayErrors(model: PageModel, prefix: string, shown: string[]): string[] {
  return Object.entries(model.errors)
    .filter(([key]) => key.startsWith(`${prefix}.`) && !shown.includes(key.slice(prefix.length + 1)))
    .flatMap(([, problems]) => problems);
}

function fieldErrors(model: PageModel, field: string, more: string[] = []): { attrs: string; html: string } {
  const problems = [...(model.errors[field] ?? []), ...more];
  if (!problems?.length) return { attrs: '', html: '' };
  const id = `error-${field.replace(/\W/g, '-')}`;
  return {
    attrs: ` aria-invalid="true" aria-describedby="${id}"`,
    html: `<p class="field-error" id="${id}">${problems.map(esc).join('<br>')}</p>`,
  };
}

function settingsSection(model: PageModel, base: string): string {
  const { text, settings } = model;
  const editable = settings.editable && model.user.admin;
  const disabled = editable ? '' : ' disabled';
  const entered = model.entered ?? {};
  const value = (name: string, stored: unknown) => (name in entered ? entered[name] : (stored ?? ''));
  const option = (current: string, optionValue: string, label: string) =>
    `<option value="${esc(optionValue)}"${current === optionValue ? ' selected' : ''}>${esc(label)}</option>`;
  // Single mode: an empty choice is the environment's value, named beside it.
  const environment = settings.environment;
  const fallback = (shown: unknown) =>
    environment
      ? `${text.environmentDefault}${shown === undefined || shown === '' ? '' : `: ${String(shown)}`}`
      : text.deploymentDefault;
  const onOff = (flag: boolean | undefined) => (flag === undefined ? undefined : flag ? text.on : text.off);
  const userNow = String(value('defaultUserId', settings.defaultUserId));
  const employees = model.employees ?? [];
  const userOptions = [
    option(userNow, '', fallback(environment?.defaultUserId)),
    ...employees.map((employee) =>
      option(userNow, String(employee.id), `${employee.name} (#${employee.id})`),
    ),
    ...(userNow && !employees.some((employee) => String(employee.id) === userNow)
      ? [option(userNow, userNow, `#${userNow}`)]
      : []),
  ];
  const taskNow = String(
    value(
      'missedCallTask',
      settings.missedCallTask === undefined ? '' : settings.missedCallTask ? 'on' : 'off',
    ),
  );
  const transcribeNow = String(
    value('transcribe', settings.transcribe === undefined ? '' : settings.transcribe ? 'on' : 'off'),
  );
  const modeNow = String(value('DIAL_MODE', settings.dial?.DIAL_MODE ?? ''));
  const user = fieldErrors(model, 'defaultUserId');
  const country = fieldErrors(model, 'defaultCountry');
  const task = fieldErrors(model, 'missedCallTask');
  const transcribe = fieldErrors(model, 'transcribe');
  // Unset in multi mode: off (a conversation is personal data, SPEC §12).
  const transcribeDefault = environment
    ? fallback(onOff(environment.transcribe))
    : `${text.deploymentDefault}: ${text.off}`;
  const line = fieldErrors(model, 'lineNumber');
  const dialNames = ['AMI_URL', 'ESL_URL', 'DIAL_URL', 'DIAL_AUTH', ...DIAL_PLAIN];
  const dial = fieldErrors(model, 'dial', strayErrors(model, 'dial', dialNames));
  /** An address or credential: never shown; "set" (with its address) when stored, empty keeps it. */
  const dialSecret = (name: string) => {
    const errors = fieldErrors(model, `dial.${name}`);
    const stored = settings.dial?.set[name];
    const state =
      stored === undefined
        ? ''
        : ` <span class="detail">(${esc(text.secretSet)}${stored ? `: ${esc(stored)}` : ''})</span>`;
    return `<div class="field"><label for="${name}">${name}${state}</label><input id="${name}" name="${name}" type="${name === 'DIAL_AUTH' ? 'password' : 'text'}" autocomplete="off" spellcheck="false"${disabled}${errors.attrs}>${errors.html}</div>`;
  };
  const dialPlain = (name: string) => {
    const errors = fieldErrors(model, `dial.${name}`);
    const current = String(value(name, settings.dial?.values[name]));
    if (name === 'DIAL_METHOD') {
      return `<div class="field"><label for="${name}">${name}</label><select id="${name}" name="${name}"${disabled}${errors.attrs}>${option(current, '', text.deploymentDefault)}${option(current, 'POST', 'POST')}${option(current, 'GET', 'GET')}</select>${errors.html}</div>`;
    }
    return `<div class="field"><label for="${name}">${name}</label><input id="${name}" name="${name}" value="${esc(current)}" autocomplete="off" spellcheck="false"${disabled}${errors.attrs}>${errors.html}</div>`;
  };
  const general = model.errors.body
    ? `<p class="field-error">${model.errors.body.map(esc).join('<br>')}</p>`
    : '';
  const failed = Object.keys(model.errors).some((key) => !key.startsWith('follow'))
    ? `<p class="problem" role="alert">${esc(text.fixErrors)}</p>`
    : '';
  const test = model.testResult
    ? `<p class="${model.testResult.ok ? 'notice' : 'problem'}" role="status" id="test-result">${esc(
        model.testResult.ok ? text.testOk : `${text.testFailed}: ${model.testResult.reason ?? ''}`,
      )}</p>`
    : '';
  const note = settings.editable ? '' : `<p class="note">${esc(text.settingsFromEnv)}</p>`;
  return `<section id="settings"><h2>${esc(text.settings)}</h2>${note}${failed}${general}
<form method="post" action="${base}/settings">
<div class="field"><label for="defaultUserId">${esc(text.defaultEmployee)}</label><select id="defaultUserId" name="defaultUserId"${disabled}${user.attrs}>${userOptions.join('')}</select>${user.html}</div>
<div class="field"><label for="defaultCountry">${esc(text.country)}</label><input id="defaultCountry" name="defaultCountry" value="${esc(value('defaultCountry', settings.defaultCountry))}" placeholder="${esc(environment?.defaultCountry ?? '')}" maxlength="10" autocomplete="off"${disabled}${country.attrs}>${country.html}</div>
<div class="field"><label for="missedCallTask">${esc(text.missedTasks)}</label><select id="missedCallTask" name="missedCallTask"${disabled}${task.attrs}>${option(taskNow, '', fallback(onOff(environment?.missedCallTask)))}${option(taskNow, 'on', text.on)}${option(taskNow, 'off', text.off)}</select>${task.html}</div>
<div class="field"><label for="transcribe">${esc(text.transcripts)}</label><select id="transcribe" name="transcribe"${disabled}${transcribe.attrs}>${option(transcribeNow, '', transcribeDefault)}${option(transcribeNow, 'on', text.on)}${option(transcribeNow, 'off', text.off)}</select>${transcribe.html}</div>
<div class="field"><label for="lineNumber">${esc(text.lineNumber)}</label><input id="lineNumber" name="lineNumber" value="${esc(value('lineNumber', settings.lineNumber))}" placeholder="${esc(environment?.lineNumber ?? '')}" maxlength="50" autocomplete="off" spellcheck="false"${disabled}${line.attrs}>${line.html}</div>
<fieldset><legend>${esc(text.dialSettings)}</legend>
<div class="field"><label for="DIAL_MODE">${esc(text.dialMode)}</label><select id="DIAL_MODE" name="DIAL_MODE"${disabled}${dial.attrs}>${option(modeNow, '', text.dialOff)}${option(modeNow, 'ami', 'AMI (Asterisk)')}${option(modeNow, 'esl', 'ESL (FreeSWITCH)')}${option(modeNow, 'http', 'HTTP')}</select>${dial.html}</div>
<p class="hint">${esc(text.dialKeep)}</p>
${dialSecret('AMI_URL')}${dialSecret('ESL_URL')}${dialSecret('DIAL_URL')}${dialSecret('DIAL_AUTH')}
<p class="hint">${esc(text.plainDefault)}</p>
${DIAL_PLAIN.map(dialPlain).join('')}
</fieldset>
${test}
${editable ? `<div class="actions"><button type="submit">${esc(text.save)}</button> <button type="submit" id="test-dial" formaction="${base}/test-dial">${esc(text.testConnection)}</button></div>` : ''}
</form></section>`;
}

/** The PBX-events settings (`follow`): how the bridge follows the PBX itself, in a form of their own. */
function followSection(model: PageModel, base: string): string {
  const { text, settings } = model;
  const editable = settings.editable && model.user.admin;
  const disabled = editable ? '' : ' disabled';
  const follow = settings.follow;
  const entered = model.entered ?? {};
  const modeNow = 'follow.PBX_EVENTS' in entered ? entered['follow.PBX_EVENTS'] : (follow?.mode ?? '');
  const trunksNow =
    'follow.PBX_TRUNKS' in entered ? entered['follow.PBX_TRUNKS'] : (follow?.PBX_TRUNKS ?? '');
  const modes: [string, string][] = [
    ['', text.followOff],
    ['ami', text.followAmi],
    ['ami+cdr', text.followAmiCdr],
    ['esl', text.followEsl],
    ['cdr', text.followCdr],
  ];
  // A combination stored through the admin API that the form does not offer is shown as it is.
  if (follow && !modes.some(([mode]) => mode === follow.mode)) modes.push([follow.mode, follow.mode]);
  const options = modes
    .map(
      ([mode, label]) =>
        `<option value="${esc(mode)}"${mode === modeNow ? ' selected' : ''}>${esc(label)}</option>`,
    )
    .join('');
  const names = ['PBX_EVENTS', 'AMI_URL', 'ESL_URL', 'ASTERISK_CDR_URL', 'PBX_TRUNKS'];
  const mode = fieldErrors(model, 'follow', [
    ...(model.errors['follow.PBX_EVENTS'] ?? []),
    ...strayErrors(model, 'follow', names),
  ]);
  const address = (name: FollowAddress, example: string) => {
    const errors = fieldErrors(model, `follow.${name}`);
    const stored = follow?.set[name];
    const state = stored
      ? `<span class="detail" id="follow-${name}-state">${esc(text.secretSet)}: ${esc(stored)}</span>`
      : `<span class="detail" id="follow-${name}-state">${esc(text.secretNotSet)}</span>`;
    const tested = model.followTests?.[name];
    const result = tested
      ? `<p class="${tested.ok ? 'notice' : 'problem'}" role="status" id="test-follow-${name}">${esc(
          tested.ok
            ? name === 'ASTERISK_CDR_URL'
              ? text.testOkLedger
              : text.testOk
            : `${text.testFailed}: ${tested.reason}`,
        )}</p>`
      : '';
    return `<div class="field"><label for="follow-${name}">${name} ${state}</label><input id="follow-${name}" name="${name}" type="text" placeholder="${esc(example)}" autocomplete="off" spellcheck="false"${disabled}${errors.attrs}>${errors.html}${result}</div>`;
  };
  const trunks = fieldErrors(model, 'follow.PBX_TRUNKS');
  const note = settings.editable ? '' : `<p class="note">${esc(text.settingsFromEnv)}</p>`;
  const failed = Object.keys(model.errors).some((key) => key.startsWith('follow'))
    ? `<p class="problem" role="alert">${esc(text.fixErrors)}</p>`
    : '';
  const actions = editable
    ? `<div class="actions"><button type="submit">${esc(text.save)}</button> <button type="submit" id="test-follow" formaction="${base}/test-follow">${esc(text.testConnection)}</button></div>`
    : '';
  return `<section id="pbx-events"><h2>${esc(text.pbxEvents)}</h2>${note}${failed}<p class="hint">${esc(text.followIntro)}</p>
<form method="post" action="${base}/follow">
<div class="field"><label for="follow-PBX_EVENTS">${esc(text.followMode)}</label><select id="follow-PBX_EVENTS" name="PBX_EVENTS"${disabled}${mode.attrs}>${options}</select>${mode.html}</div>
<p class="hint">${esc(text.followKeep)}</p>
${address('AMI_URL', 'tls://user:secret@pbx.example.com:5039')}${address('ESL_URL', 'tcp://:password@10.0.0.5:8021')}${address('ASTERISK_CDR_URL', 'mysql://user:password@10.0.0.5:3306/asteriskcdrdb')}
<div class="field"><label for="follow-PBX_TRUNKS">${esc(text.trunks)}</label><input id="follow-PBX_TRUNKS" name="PBX_TRUNKS" value="${esc(trunksNow)}" placeholder="PJSIP/trunk*" autocomplete="off" spellcheck="false"${disabled}${trunks.attrs}>${trunks.html}</div>
${actions}
</form></section>`;
}
