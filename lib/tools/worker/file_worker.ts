/**
 * Worker entry module of the confined file tools: read_file, write_file,
 * edit_file and read_image (files only: the worker has no network), served
 * to a {@linkcode ToolWorkerPool}. Loaded only as a Worker (`confined.ts`);
 * `scripts/compile.ts` embeds it with `--include`.
 *
 * @module
 */
import { createEditFileTool } from "../edit_file.ts";
import { createReadFileTool } from "../read_file.ts";
import { createReadImageTool } from "../read_image.ts";
import { createWriteFileTool } from "../write_file.ts";
import { serveTools } from "./serve.ts";

serveTools({
  read_file: createReadFileTool,
  write_file: createWriteFileTool,
  edit_file: createEditFileTool,
  read_image: createReadImageTool,
});
