/** A plan document in the format a command was asked for (`plan --format`, `show --format`). Pure. */
import type { FullPlanArtifact, RepositoryLinks } from './file-links.ts';
import { renderPlanAnnotations } from './render-github.ts';
import { renderPlanJson } from './render-json.ts';
import { renderPlanMarkdown } from './render-markdown.ts';
import { renderPlanText } from './render-text.ts';
import type { PlanDocument } from './types.ts';

export type PlanFormat = 'text' | 'markdown' | 'json' | 'github';

export interface PlanFormatOptions {
  /** The text plan is coloured (a terminal). */
  readonly color: boolean;
  /** markdown: where the plan's files are on the web, and the artifact holding the whole plan (a CI job). */
  readonly links?: RepositoryLinks | undefined;
  readonly artifact?: FullPlanArtifact | undefined;
}

export function renderPlanAs(plan: PlanDocument, format: PlanFormat, { color, links, artifact }: PlanFormatOptions): string {
  switch (format) {
    case 'json':
      return renderPlanJson(plan);
    case 'markdown':
      return renderPlanMarkdown(plan, { links, artifact });
    case 'github':
      // Annotations and a job log are read without a terminal: never coloured.
      return `${renderPlanAnnotations(plan)}${renderPlanText(plan)}`;
    case 'text':
      return renderPlanText(plan, { color });
  }
}
