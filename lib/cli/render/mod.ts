/**
 * Terminal rendering of the OmniMessage stream (work in progress: the API is
 * `createRenderer` in `render.ts`).
 *
 * @module
 */
export {};
