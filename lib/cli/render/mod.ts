/**
 * Terminal rendering of the OmniMessage stream, shared by `penguin run` and
 * `penguin chat`.
 *
 * ```ts ignore
 * const r = createRenderer({ write: io.out, color: io.color, collapse: false });
 * r.beginTask();
 * for await (const msg of session.run(prompt, { signal, approve })) r.push(msg);
 * r.endTask(); // flushes, prints the [stats] line
 * ```
 *
 * For an interactive approval: `r.beginPrompt(toolCall)`, write the question,
 * read the answer (end the line), then `r.endPrompt(toolCall, decision)`.
 *
 * @module
 */
export { createRenderer, type Renderer, type RendererOptions } from "./render.ts";
export { type CollapsedOutput, type HistoryOptions, renderHistory } from "./history.ts";
export {
  createMarkdownStream,
  type MarkdownOptions,
  type MarkdownStream,
  type MarkdownStreamOptions,
  renderMarkdown,
  terminalMarkdown,
} from "./markdown.ts";
export { createSpinner, type Spinner, type SpinnerOptions } from "./spinner.ts";
