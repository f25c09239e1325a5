import { CallStore } from '../store/call-store';
import { LineFormErrors, linesSection } from './lines-render';
import { pageLinesOf } from './lines-view';
import { PageCall, PageModel } from './page-render';
import { PageEmployee, PageSettings } from './page-source';
import { setupLink, setupWelcome } from './setup-render';
import { setupTextFor } from './setup-text';

export interface OverviewInput {
  portalId: string;
  lang: string;
  admin: boolean;
  settings: PageSettings;
  calls: PageCall[];
  employees: PageEmployee[] | undefined;
  lineRefused?: LineFormErrors;
}

/**
 * The overview's own sections of the setup and the lines: the link to the guided setup; while the portal has
 * no PBX connection (no PBX events, no dial settings) and no call nor line, the setup's first question
 * before everything else; the lines with today's calls and their rules.
 */
export async function overviewSections(
  calls: CallStore,
  input: OverviewInput,
): Promise<NonNullable<PageModel['sections']>> {
  const text = setupTextFor(input.lang);
  const lines = await pageLinesOf(calls, input.portalId, input.settings.lines);
  const editable = input.admin && input.settings.editable;
  const unset =
    !input.settings.follow && !input.settings.dial && input.calls.length === 0 && lines.lines.length === 0;
  return {
    link: input.admin && !(editable && unset) ? setupLink(text) : '',
    top: editable && unset ? setupWelcome(text) : '',
    lines: linesSection({
      text,
      lines,
      employees: input.employees,
      editable,
      from: 'page',
      refused: input.lineRefused,
    }),
  };
}
