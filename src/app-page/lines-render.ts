import { esc } from './page-render';
import { PageEmployee } from './page-source';
import { PageLine, PageLines } from './lines-view';
import { fill, SetupText } from './setup-text';

/** A refused line form: which line, the problems by field, and what was typed (shown again). */
export interface LineFormErrors {
  number: string;
  errors: Record<string, string[]>;
  entered: Record<string, string>;
}

export interface LinesSectionInput {
  text: SetupText;
  lines: PageLines;
  employees: PageEmployee[] | undefined;
  /** Whether the forms may be used (an administrator, settings stored with the portal). */
  editable: boolean;
  /** Where a saved line returns to: the overview or the guided setup's lines step. */
  from: 'page' | 'setup';
  refused?: LineFormErrors;
}

/**
 * The lines list (SPEC §11's last point): each line configured or seen, today's calls on it, and a form of
 * its rules posting `/app/lines` (stored as the portal's `lines` setting, checked as the admin API checks
 * it); a refused rule is shown beside its field with what was typed.
 */
export function linesSection(input: LinesSectionInput): string {
  const { text, lines } = input;
  const unlined = lines.unlined
    ? `<p class="note" id="lines-unlined">${esc(fill(text.unlined, { n: lines.unlined }))}</p>`
    : '';
  const list = lines.lines.length
    ? lines.lines.map((line, index) => lineForm(input, line, index)).join('\n')
    : `<p id="lines-none">${esc(text.linesNone)}</p>`;
  const failed = input.refused ? `<p class="problem" role="alert">${esc(text.fixMarked)}</p>` : '';
  return `<section id="lines"><h2>${esc(text.linesTitle)}</h2><p class="hint">${esc(text.linesIntro)}</p>${failed}${unlined}
${list}</section>`;
}

function lineForm(input: LinesSectionInput, line: PageLine, index: number): string {
  const { text, employees } = input;
  const refused = input.refused?.number === line.number ? input.refused : undefined;
  const disabled = input.editable ? '' : ' disabled';
  const id = (field: string) => `line-${index}-${field}`;
  const value = (field: string, stored: unknown) =>
    refused && field in refused.entered ? refused.entered[field] : stored === undefined ? '' : String(stored);
  const problems = (field: string) => {
    const messages = refused?.errors[field] ?? [];
    if (!messages.length) return { attrs: '', html: '' };
    return {
      attrs: ` aria-invalid="true" aria-describedby="${id(field)}-error"`,
      html: `<p class="field-error" id="${id(field)}-error">${messages.map(esc).join('<br>')}</p>`,
    };
  };
  const option = (current: string, optionValue: string, label: string) =>
    `<option value="${esc(optionValue)}"${current === optionValue ? ' selected' : ''}>${esc(label)}</option>`;
  const yesNo = (field: 'crmCreate' | 'report' | 'missedCallTask', label: string, withDefault: boolean) => {
    const stored = line.rule[field];
    const current = value(field, stored === undefined ? '' : stored ? 'yes' : 'no');
    const errors = problems(field);
    const choices = withDefault
      ? [
          option(current, '', text.lineAsAll),
          option(current, 'yes', text.yes),
          option(current, 'no', text.no),
        ]
      : // Default true (SPEC §11): "yes" is the rule unset.
        [option(current === '' ? 'yes' : current, 'yes', text.yes), option(current, 'no', text.no)];
    return `<div class="field"><label for="${id(field)}">${esc(label)}</label><select id="${id(field)}" name="${field}"${disabled}${errors.attrs}>${choices.join('')}</select>${errors.html}</div>`;
  };
  const input_ = (field: 'name' | 'crmSource', label: string, max: number) => {
    const errors = problems(field);
    return `<div class="field"><label for="${id(field)}">${esc(label)}</label><input id="${id(field)}" name="${field}" value="${esc(value(field, line.rule[field]))}" maxlength="${max}" autocomplete="off"${disabled}${errors.attrs}>${errors.html}</div>`;
  };
  const userNow = value('defaultUserId', line.rule.defaultUserId);
  const users = [
    option(userNow, '', text.lineAsAll),
    ...(employees ?? []).map((employee) =>
      option(userNow, String(employee.id), `${employee.name} (#${employee.id})`),
    ),
    ...(userNow && !(employees ?? []).some((employee) => String(employee.id) === userNow)
      ? [option(userNow, userNow, `#${userNow}`)]
      : []),
  ];
  const user = problems('defaultUserId');
  const general = problems('line');
  const title = line.rule.name ? `${line.rule.name} · ${line.number}` : line.number;
  const save = input.editable
    ? `<div class="actions"><button type="submit" id="${id('save')}">${esc(text.saveLine)}</button></div>`
    : '';
  return `<form method="post" action="/app/lines" class="line" data-line="${esc(line.number)}" id="line-${index}">
<h3>${esc(title)} <span class="detail line-count">${esc(fill(text.lineCallsToday, { n: line.today }))}</span></h3>${general.html}
<input type="hidden" name="number" value="${esc(line.number)}"><input type="hidden" name="from" value="${input.from}">
${input_('name', text.lineName, 50)}
${yesNo('report', text.lineReport, false)}
${yesNo('crmCreate', text.lineCrmCreate, false)}
${input_('crmSource', text.lineSource, 50)}
<div class="field"><label for="${id('defaultUserId')}">${esc(text.lineDefaultUser)}</label><select id="${id('defaultUserId')}" name="defaultUserId"${disabled}${user.attrs}>${users.join('')}</select>${user.html}</div>
${yesNo('missedCallTask', text.lineMissedTask, true)}
${save}
</form>`;
}
