/**
 * The `[use_skills]` block that opens a task naming installed skills
 * (`penguin run --skill`, chat's `/skill`).
 *
 * @module
 */
import { markerBlock } from "./markers.ts";

/** The task text, opened by a `[use_skills]` block when skills were named. */
export function withSkills(message: string, skills: readonly string[]): string {
  if (skills.length === 0) return message;
  return `${markerBlock("use_skills", `skills: ${skills.join(", ")}`)}\n\n${message}`;
}
