import { ConnectionOutcome } from './connection-test';
import { documentOf, esc, PageCall } from './page-render';
import { PageText } from './page-text';
import { AMI_READ, AMI_WRITE, DEFAULT_AMI_USER, DEFAULT_CDR_NAME, PbxSystem } from './setup-answers';
import { fill, SetupText } from './setup-text';

/** What every step of the guided setup is drawn with. */
export interface SetupFrame {
  text: SetupText;
  page: PageText;
  lang: string;
  /** The sealed session, carried in a hidden field of every form. */
  session: string;
  step: number;
  notice?: string;
}

/** A step's whole document: its title, where it is (step n of 5), the way out to every setting. */
export function setupDocument(frame: SetupFrame, body: string): string {
  const { text } = frame;
  const html = [
    `<header><h1>${esc(text.setupTitle)}</h1><p class="detail" id="setup-step">${esc(fill(text.stepOf, { n: frame.step }))}</p>`,
    `<form method="post" action="/app/view" class="inline"><button type="submit" class="secondary" id="all-settings">${esc(text.allSettings)}</button></form></header>`,
    `<main id="setup">`,
    frame.notice ? `<p class="notice" role="status">${esc(frame.notice)}</p>` : '',
    body,
    `</main>`,
  ].join('\n');
  return documentOf(frame.lang, text.setupTitle, withSession(html, frame.session));
}

/** Every form posting to the page carries the session (never an address: proxies log addresses). */
export function withSession(html: string, session: string): string {
  const held = `<input type="hidden" name="session" value="${esc(session)}">`;
  return html.replace(/<form method="post" action="\/app[^"]*"[^>]*>/g, (form) => form + held);
}

/** The overview's way into the setup (a button: the session rides in its form). */
export function setupLink(text: SetupText): string {
  return `<form method="post" action="/app/setup" class="inline"><button type="submit" id="setup-link">${esc(text.setupLink)}</button></form>`;
}

/** Step 1: which phone system (one button each: one press chooses and goes on). */
export function systemChoice(text: SetupText, heading = 'h2'): string {
  const systems: [PbxSystem, string][] = [
    ['freepbx', text.sysFreepbx],
    ['freeswitch', text.sysFreeswitch],
    ['3cx', text.sys3cx],
    ['yeastar', text.sysYeastar],
    ['other', text.sysOther],
  ];
  return `<${heading} id="which-system">${esc(text.whichSystem)}</${heading}>
<form method="post" action="/app/setup/questions" class="choices" aria-labelledby="which-system">${systems
    .map(
      ([system, label]) =>
        `<button type="submit" name="system" value="${system}" id="system-${system}">${esc(label)}</button>`,
    )
    .join('')}</form>`;
}

/** The overview's first section while nothing is set up: the setup's first question, before all else. */
export function setupWelcome(text: SetupText): string {
  return `<section id="setup-welcome"><h2>${esc(text.setupTitle)}</h2><p>${esc(text.welcome)}</p>${systemChoice(text, 'h3')}</section>`;
}

export interface QuestionsInput {
  text: SetupText;
  system: 'freepbx' | 'freeswitch';
  /** The bridge's address as the PBX will likely see it. */
  bridgeAddress: string;
  entered: Record<string, string>;
  errors: Record<string, string[]>;
  /** A password of this kind is stored: an empty field keeps it. */
  passwordStored: boolean;
  editable: boolean;
}

/** Step 2 for a PBX the bridge logs in to: what to do on the PBX, then its questions in words. */
export function questionsStep(input: QuestionsInput): string {
  const { text, system, entered, errors } = input;
  const disabled = input.editable ? '' : ' disabled';
  const field = (
    name: string,
    label: string,
    help: string,
    options: { type?: string; value?: string; stored?: string; required?: boolean } = {},
  ) => {
    const problems = errors[name] ?? [];
    const described = [`${name}-help`, problems.length ? `${name}-error` : ''].filter(Boolean).join(' ');
    const value = options.type === 'password' ? '' : (entered[name] ?? options.value ?? '');
    const stored = options.stored
      ? ` <span class="detail">(${esc(fill(text.storedAs, { name: options.stored }))})</span>`
      : '';
    return `<div class="field"><label for="setup-${name}">${esc(label)}${stored}</label><input id="setup-${name}" name="${name}" type="${options.type ?? 'text'}" value="${esc(value)}" autocomplete="off" spellcheck="false" aria-describedby="${described}"${options.required ? ' required' : ''}${problems.length ? ' aria-invalid="true"' : ''}${disabled}><p class="hint" id="${name}-help">${esc(help)}</p>${
      problems.length ? `<p class="field-error" id="${name}-error">${problems.map(esc).join('<br>')}</p>` : ''
    }</div>`;
  };
  const ami = system === 'freepbx';
  const url = ami ? 'AMI_URL' : 'ESL_URL';
  const passwordHelp = input.passwordStored ? `${text.passwordHelp} ${text.passwordKeep}` : text.passwordHelp;
  const tls = `<div class="field check"><input type="checkbox" id="setup-tls" name="tls" value="yes"${entered.tls === 'yes' ? ' checked' : ''}${disabled}><label for="setup-tls">${esc(text.tls)}</label></div>`;
  const cdr = ami
    ? `<fieldset><legend>${esc(text.cdrTitle)}</legend><p class="hint">${esc(text.cdrHelp)}</p>${field('cdrUser', text.cdrUser, text.cdrUserHelp, { stored: 'ASTERISK_CDR_URL' })}${field('cdrPassword', text.cdrPassword, text.passwordHelp, { type: 'password' })}${field('cdrName', text.cdrName, text.cdrNameHelp, { value: DEFAULT_CDR_NAME })}</fieldset>`
    : '';
  const clickNow = entered.clickToCall ?? 'no';
  const radio = (value: string, label: string) =>
    `<div class="check"><input type="radio" id="setup-click-${value}" name="clickToCall" value="${value}"${clickNow === value ? ' checked' : ''}${disabled}><label for="setup-click-${value}">${esc(label)}</label></div>`;
  const click = `<fieldset><legend>${esc(text.clickQuestion)}</legend><p class="hint">${esc(ami ? text.clickHelpAmi : text.clickHelpEsl)}</p>${radio('yes', text.yes)}${radio('no', text.no)}${(errors.clickToCall ?? []).map((message) => `<p class="field-error">${esc(message)}</p>`).join('')}</fieldset>`;
  const general = errors.form?.length
    ? `<p class="field-error">${errors.form.map(esc).join('<br>')}</p>`
    : '';
  const failed = Object.keys(errors).length
    ? `<p class="problem" role="alert">${esc(text.fixMarked)}</p>`
    : '';
  return `<section id="on-pbx"><h2>${esc(text.onPbx)}</h2>${ami ? freepbxSnippet(input) : freeswitchSnippet(input)}</section>
<section id="questions"><h2>${esc(text.thenHere)}</h2>${failed}${general}
<form method="post" action="/app/setup/connect"><input type="hidden" name="system" value="${system}">
${field('host', text.pbxAddress, text.pbxAddressHelp, { stored: url, required: true })}
${field('port', text.port, ami ? text.portHelpAmi : text.portHelpEsl, { value: ami ? '5038' : '8021' })}
${tls}
${ami ? field('user', text.amiUser, text.amiUserHelp, { value: DEFAULT_AMI_USER, required: true }) : ''}
${field('password', ami ? text.amiPassword : text.eslPassword, passwordHelp, { type: 'password' })}
${cdr}
${click}
<div class="actions"><button type="submit" id="setup-save"${disabled}>${esc(text.saveAndTest)}</button></div>
</form>
<form method="post" action="/app/setup" class="inline"><button type="submit" class="secondary" id="setup-back">${esc(text.back)}</button></form></section>`;
}

function freepbxSnippet({ text, bridgeAddress, entered }: QuestionsInput): string {
  const user = entered.user || DEFAULT_AMI_USER;
  const permit = `${bridgeAddress}/255.255.255.255`;
  // The rights as FreePBX shows them, ticked as they must be (originate only for click-to-call).
  const rights = (kind: string, names: string[], extra: string[] = []) =>
    `<li>${esc(kind === 'read' ? text.rightsRead : text.rightsWrite)}: ${[...names, ...extra]
      .map(
        (name) =>
          `<span class="right"><input type="checkbox" id="right-${kind}-${name}"${names.includes(name) ? ' checked' : ''} disabled><label for="right-${kind}-${name}">${esc(name)}</label></span>`,
      )
      .join(' ')}</li>`;
  const conf = `[${user}]
secret = A_LONG_PASSWORD
deny = 0.0.0.0/0.0.0.0
permit = ${permit}
read = ${AMI_READ.join(',')}
write = ${AMI_WRITE.join(',')}
; click-to-call too: write = ${[...AMI_WRITE, 'originate'].join(',')}`;
  return `<p class="note" id="bridge-address">${esc(fill(text.bridgeAddress, { address: bridgeAddress }))}</p>
<h3>${esc(text.freepbxGui)}</h3><ol id="freepbx-steps">
<li>${esc(fill(text.freepbxName, { user }))}</li>
<li>${esc(fill(text.freepbxPermit, { permit }))}</li>
<li>${esc(text.freepbxRights)}<ul class="rights">${rights('read', AMI_READ)}${rights('write', AMI_WRITE, ['originate'])}</ul><p class="hint">${esc(text.originateNote)}</p></li>
<li>${esc(text.freepbxApply)}</li></ol>
<h3>${esc(text.asteriskConf)}</h3><pre class="snippet" id="manager-conf">${esc(conf)}</pre>`;
}

function freeswitchSnippet({ text, bridgeAddress }: QuestionsInput): string {
  const socket = `<configuration name="event_socket.conf" description="Socket Client">
  <settings>
    <param name="listen-ip" value="0.0.0.0"/>
    <param name="listen-port" value="8021"/>
    <param name="password" value="A_LONG_PASSWORD"/>
    <param name="apply-inbound-acl" value="crm-bridge"/>
  </settings>
</configuration>`;
  const acl = `<list name="crm-bridge" default="deny">
  <node type="allow" cidr="${bridgeAddress}/32"/>
</list>`;
  return `<p class="note" id="bridge-address">${esc(fill(text.bridgeAddress, { address: bridgeAddress }))}</p>
<p>${esc(text.fsConf)}</p><pre class="snippet" id="event-socket-conf">${esc(socket)}</pre>
<p>${esc(text.fsAcl)}</p><pre class="snippet" id="acl-conf">${esc(acl)}</pre>`;
}

export interface PostingInput {
  text: SetupText;
  system: '3cx' | 'yeastar' | 'other';
  /** The bridge's own base address, as the PBX reaches it. */
  baseUrl: string;
  /** A token just created: in this answer only. */
  newToken?: string;
  /** Whether the page can create PBX tokens here (with many portals; otherwise PBX_TOKENS). */
  tokens: boolean;
  editable: boolean;
}

/** Step 2 for a PBX that posts to the bridge: the addresses to paste, with a PBX token made right here. */
export function postingStep(input: PostingInput): string {
  const { text, system, baseUrl } = input;
  const token = input.newToken ?? 'YOUR_PBX_TOKEN';
  const paste =
    system === 'yeastar'
      ? `<p>${esc(text.yeastarSteps)}</p><pre class="snippet" id="paste-url">${esc(`${baseUrl}/v1/pbx/yeastar?token=${token}`)}</pre>`
      : system === '3cx'
        ? `<p>${esc(text.threecxSteps)}</p><dl class="snippet" id="paste-url"><dt>${esc(text.threecxUrl)}</dt><dd>${esc(baseUrl)}</dd><dt>${esc(text.threecxToken)}</dt><dd>${esc(token)}</dd></dl>`
        : `<p>${esc(text.otherSteps)}</p><pre class="snippet" id="paste-url">${esc(`POST ${baseUrl}/v1/calls/events\nAuthorization: Bearer ${token}\nContent-Type: application/json`)}</pre>`;
  const fresh = input.newToken
    ? `<p class="notice" role="status" id="token-once">${esc(text.tokenShownOnce)}</p>`
    : '';
  const create = !input.tokens
    ? `<p class="note">${esc(text.tokensFromEnv)}</p>`
    : input.newToken || !input.editable
      ? ''
      : `<p class="hint">${esc(text.tokenPlaceholderNote)}</p><form method="post" action="/app/setup/token" class="inline"><input type="hidden" name="system" value="${system}"><button type="submit" id="setup-token">${esc(text.createPbxToken)}</button></form>`;
  return `<section id="on-pbx"><h2>${esc(text.urlsTitle)}</h2>${fresh}${paste}${create}</section>
<div class="actions"><form method="post" action="/app/setup"><button type="submit" class="secondary" id="setup-back">${esc(text.back)}</button></form><form method="post" action="/app/setup/lines"><button type="submit" id="setup-next">${esc(text.nextLines)}</button></form></div>`;
}

export interface TestInput {
  text: SetupText;
  system: 'freepbx' | 'freeswitch';
  bridgeAddress: string;
  /** The address tested, without credentials (`host:port`). */
  target: string;
  outcome: ConnectionOutcome | undefined;
  ledger?: ConnectionOutcome;
  /** A test the portal's limit refused, and when to try again. */
  limitedSec?: number;
}

/** Step 3: the connection test, said in words: what is wrong and what to check. */
export function testStep(input: TestInput): string {
  const { text, outcome } = input;
  const values = { address: input.bridgeAddress, target: input.target };
  const said = (ok: boolean, lines: string[], detail?: string) =>
    `<div class="${ok ? 'notice' : 'problem'}" role="status" id="test-words">${lines.map((line) => `<p>${esc(line)}</p>`).join('')}${
      detail ? `<p class="detail">${esc(text.technical)}: ${esc(detail)}</p>` : ''
    }</div>`;
  let words: string;
  if (input.limitedSec !== undefined) {
    words = said(false, [fill(text.testLimited, { s: input.limitedSec })]);
  } else if (!outcome) {
    words = said(false, [text.noConnection]);
  } else if (outcome.ok) {
    words = said(true, [text.testOk]);
  } else if (outcome.reason.startsWith('login refused')) {
    const check = input.system === 'freepbx' ? text.checkLoginAmi : text.checkLoginEsl;
    words = said(false, [fill(text.testLoginRefused, values), fill(check, values)], outcome.reason);
  } else if (outcome.reason.startsWith('not allowed')) {
    words = said(false, [fill(text.testNotAllowed, values)], outcome.reason);
  } else {
    words = said(
      false,
      [fill(text.testUnreachable, values), fill(text.checkUnreachable, values)],
      outcome.reason,
    );
  }
  const ledger = input.ledger
    ? `<p class="${input.ledger.ok ? 'notice' : 'problem'}" id="test-ledger">${esc(
        input.ledger.ok ? text.ledgerOk : fill(text.ledgerFailed, { reason: input.ledger.reason }),
      )}</p>`
    : '';
  const change = `<form method="post" action="/app/setup/questions"><input type="hidden" name="system" value="${input.system}"><button type="submit" class="secondary" id="setup-change">${esc(text.changeAnswers)}</button></form>`;
  const again = `<form method="post" action="/app/setup/test"><button type="submit" class="secondary" id="setup-test-again">${esc(text.testAgain)}</button></form>`;
  const next = `<form method="post" action="/app/setup/lines"><button type="submit" id="setup-next">${esc(text.nextLines)}</button></form>`;
  return `<section id="test"><h2>${esc(text.testTitle)}</h2>${words}${ledger}
<div class="actions">${change}${again}${outcome?.ok ? next : ''}</div></section>`;
}

/** Step 4: the lines seen, each with its rules; then done. */
export function linesStep(text: SetupText, linesHtml: string): string {
  return `${linesHtml}
<div class="actions"><form method="post" action="/app/setup/lines"><button type="submit" class="secondary" id="setup-read-again">${esc(text.readAgain)}</button></form><form method="post" action="/app/setup/done"><button type="submit" id="setup-done">${esc(text.done)}</button></form></div>`;
}

/** Step 5: today's calls as they arrive (read again: no scripts), and the way to the overview. */
export function doneStep(text: SetupText, page: PageText, calls: PageCall[]): string {
  const count = (state: PageCall['state']) => calls.filter((call) => call.state === state).length;
  const rows = calls
    .slice(0, 20)
    .map(
      (call) =>
        `<tr class="${call.state}"><td>${esc(call.callId)}</td><td>${esc(page[call.state])}</td><td class="portal-words">${esc(call.lastError ?? '')}</td></tr>`,
    )
    .join('');
  const table = calls.length
    ? `<div class="scroll"><table><thead><tr><th scope="col">${esc(page.callId)}</th><th scope="col">${esc(page.state)}</th><th scope="col">${esc(page.portalSaid)}</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : `<p id="done-no-calls">${esc(text.doneNoCalls)}</p>`;
  return `<section id="done"><h2>${esc(text.doneTitle)}</h2><p>${esc(text.doneIntro)}</p>
<p class="counts" id="done-counts">${esc(page.delivered)}: <strong>${count('delivered')}</strong> · ${esc(page.waiting)}: <strong>${count('waiting')}</strong> · ${esc(page.failed)}: <strong>${count('failed')}</strong></p>${table}
<div class="actions"><form method="post" action="/app/setup/done"><button type="submit" class="secondary" id="setup-read-again">${esc(text.readAgain)}</button></form><form method="post" action="/app/view"><button type="submit" id="setup-overview">${esc(text.toOverview)}</button></form></div></section>`;
}
