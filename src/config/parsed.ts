/** What config/parse.ts gives: the file's data and how a path in it is located (own module: the readers it uses name these types too). */
import type { Problem } from './problems.js';

export type ConfigPath = readonly (string | number)[];

/** A value `${NAME}` brought in from the environment. */
export interface EnvValue {
  readonly name: string;
  readonly value: string;
}

export interface ParsedConfig {
  readonly file: string;
  /** The plain data of the file, environment already substituted. `undefined` when not YAML. */
  readonly value: unknown;
  readonly problems: Problem[];
  /** Line and column of the node at `path`, or of its closest existing ancestor. */
  locate(path: ConfigPath): { line: number; col: number };
  /**
   * Paths of unquoted values that were one whole `${NAME}`: validation reads those as a number or
   * boolean where the schema wants one (`port: ${PORT:-8080}`), and as text everywhere else.
   */
  readonly wholeEnvPaths: readonly ConfigPath[];
  /** The values substituted from the environment, with their names (never repeated in a message). */
  readonly envValues: readonly EnvValue[];
  /** Line and column of the key `key` inside the map at `path` (for unknown-key problems). */
  locateKey(path: ConfigPath, key: string): { line: number; col: number };
  /** The keys written before `key` in the map at `path`, nearest first. */
  keysBefore(path: ConfigPath, key: string): string[];
}
