// A reward file as the TypeScript compiler sees it. Reward files leave the schema parameters unannotated, so
// the checked text is a "virtual" copy with each schema-named parameter annotated with its schema type (in
// any function of the file: the paper's nested `dense`/`sparse` helpers reuse the names). Positions map back
// to the user's text through the list of insertions. One LanguageService per open file keeps re-checks
// incremental; the standard library (as one file) and the schema declarations are parsed once for all of
// them (shared registry).
import ts from 'typescript';
import path from 'node:path';
import { PARAMETERS, loadSchema, rewardDeclarations, type ObservationSchema, type ParameterSpec } from '../schema';
import { TOO_DEEP_MESSAGE, tooDeepAt } from '../reward/compile';

export { REWARD_FILE_PATTERN } from '../records';

const DECLARATIONS_FILE = path.join(path.sep, '__rewardsmith__', 'reward-schema.d.ts');

/**
 * The schema's declarations with the dict types opened to any string key: unknown and wrong-kind names are
 * reported by the schema rules (with did-you-mean and fixes), and `current_nearest_blocks[name]` with a
 * `string` key is correct code. Entry values are not `| undefined` either: presence is checked by the
 * nearest-entry rule, which understands `in` guards (TypeScript does not narrow optional properties by `in`).
 */
function checkedDeclarations(schema: ObservationSchema): string {
  let text = rewardDeclarations(schema);
  for (const alias of ['NearestBlocks', 'InventoryChange', 'KillEntity']) {
    const pattern = new RegExp(`^type ${alias} = \\{ \\[K in \\w+\\]\\?: (\\w+) \\};$`, 'm');
    if (!pattern.test(text)) throw new Error(`rewardDeclarations() no longer declares ${alias} as a mapped type; update checkedDeclarations()`);
    text = text.replace(pattern, (_m, value: string) => `type ${alias} = { [name: string]: ${value} };`);
  }
  // past_agent_positions is never empty (the last entry is the current position), so `.at(-1)` is defined.
  text += '/** One [x, y, z, yaw°, pitch°] per step so far; never empty, the last entry is the current position. */\n';
  text += `interface ${POSITIONS_TYPE} extends Array<AgentPosition> { at(index: number): AgentPosition }\n`;
  // Reward code may log while debugging; the sandbox gives it a console.
  return text + 'declare const console: { log(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void };\n';
}

/** The standard library reward files are checked against (TypeScript's lib.es2022.d.ts and what it references). */
const STANDARD_LIBRARY = 'lib.es2022.d.ts';
const LIBRARY_FILE = path.join(path.sep, '__rewardsmith__', 'lib.es2022.d.ts');

/**
 * The standard library as one declaration file: TypeScript's lib files for STANDARD_LIBRARY, in the order
 * their `/// <reference lib>` directives give, concatenated. A program over one library file instead of 57
 * is cheaper to rebuild after every edit (fewer files to look up, reuse and merge), with the same globals.
 */
function libraryText(): string {
  const dir = path.dirname(ts.getDefaultLibFilePath({ target: ts.ScriptTarget.ES2022 }));
  const seen = new Set<string>();
  const parts: string[] = [];
  const add = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const text = ts.sys.readFile(path.join(dir, name));
    if (text === undefined) throw new Error(`TypeScript's ${name} is missing from ${dir}`);
    for (const m of text.matchAll(/^\/\/\/ <reference lib="([^"]+)" \/>/gm)) add(`lib.${m[1]!.toLowerCase()}.d.ts`);
    parts.push(text.replace(/^\/\/\/ <reference [^\n]*\n/gm, ''));
  };
  add(STANDARD_LIBRARY);
  return parts.join('\n');
}

export const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  // The library comes as one root file (LIBRARY_FILE), not through `lib`.
  noLib: true,
  types: [],
  strict: true,
  noImplicitReturns: true,
  allowJs: true,
  checkJs: true,
  noEmit: true,
  skipLibCheck: true,
  isolatedModules: false,
};

/**
 * TypeScript's implicit-any errors. Reward files are written without annotations (the paper's style, and
 * what LLMs write), so untyped helper parameters and Python-style dict lookups are not errors; schema-named
 * parameters get the schema's types. noImplicitAny stays on because it gives `let best = null` an evolving
 * type instead of `null`.
 */
export const IMPLICIT_ANY_CODES: ReadonlySet<number> = new Set([7005, 7006, 7008, 7010, 7011, 7018, 7019, 7022, 7023, 7024, 7031, 7034, 7052, 7053]);

const POSITIONS_TYPE = 'AgentPositions';

/** The type a schema parameter is checked with: the schema's, except the never-empty position list. */
function checkedType(spec: ParameterSpec): string {
  return spec.tsType === 'AgentPosition[]' ? POSITIONS_TYPE : spec.tsType;
}

const PARAMETER_BY_NAME = new Map<string, ParameterSpec>(PARAMETERS.map((p) => [p.name, p]));

export function schemaParameter(name: string): ParameterSpec | undefined {
  return PARAMETER_BY_NAME.get(name);
}

interface Insertion {
  /** Offset in the user's text. */
  at: number;
  text: string;
}

/**
 * Adds the schema type to every unannotated schema-named parameter, and to a helper's unannotated parameter
 * when every call passes it the same kind of schema parameter (`nearest_log(current_nearest_blocks)` and
 * `nearest_log(previous_nearest_blocks)` make `nearest_log(blocks)` take NearestBlocks).
 */
function annotate(fileName: string, source: ts.SourceFile): { virtual: string; insertions: Insertion[] } {
  const isJs = fileName.endsWith('.js');
  const text = source.text;
  const insertions: Insertion[] = [];
  const annotateParam = (param: ts.ParameterDeclaration, tsType: string) => {
    if (isJs) insertions.push({ at: param.name.getStart(source), text: `/** @type {${tsType}} */ ` });
    else insertions.push({ at: (param.questionToken ?? param.name).end, text: `: ${tsType}` });
  };
  const helpers = new Map<string, ts.NodeArray<ts.ParameterDeclaration>>();
  const calls = new Map<string, ts.CallExpression[]>();
  const visit = (node: ts.Node) => {
    if (ts.isParameter(node) && ts.isIdentifier(node.name) && !node.type) {
      const spec = PARAMETER_BY_NAME.get(node.name.text);
      if (spec) annotateParam(node, checkedType(spec));
    }
    if (ts.isFunctionDeclaration(node) && node.name) helpers.set(node.name.text, node.parameters);
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))
    ) {
      helpers.set(node.name.text, node.initializer.parameters);
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const list = calls.get(node.expression.text) ?? [];
      list.push(node);
      calls.set(node.expression.text, list);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const [name, params] of helpers) {
    const sites = calls.get(name) ?? [];
    if (sites.length === 0) continue;
    params.forEach((param, i) => {
      if (param.type || !ts.isIdentifier(param.name) || PARAMETER_BY_NAME.has(param.name.text) || param.dotDotDotToken) return;
      const types = new Set(
        sites.map((call) => {
          const arg = call.arguments[i];
          const spec = arg && ts.isIdentifier(arg) ? PARAMETER_BY_NAME.get(arg.text) : undefined;
          return spec && checkedType(spec);
        }),
      );
      const [only] = types;
      if (types.size === 1 && only) annotateParam(param, only);
    });
  }
  insertions.sort((a, b) => a.at - b.at);
  let virtual = '';
  let last = 0;
  for (const ins of insertions) {
    virtual += text.slice(last, ins.at) + ins.text;
    last = ins.at;
  }
  virtual += text.slice(last);
  return { virtual, insertions };
}

const documents = ts.createDocumentRegistry();
/**
 * The projects' shared documents. The library and declaration files never change, so their parsed and bound
 * source files are never released: a project disposed after one lint (lintText, the analyzer's patch checks)
 * would otherwise drop the last reference, and the next project would parse and bind the 470 kB library again
 * (0.5 of the 0.52 CPU-s a warm lintText took).
 */
const registry: ts.DocumentRegistry = {
  ...documents,
  releaseDocumentWithKey: (file: ts.Path, key: ts.DocumentRegistryBucketKey, scriptKind?: ts.ScriptKind, impliedNodeFormat?: ts.ResolutionMode) => {
    // TypeScript's language service always passes all four (the three-argument form is deprecated).
    if (file !== LIBRARY_FILE && file !== DECLARATIONS_FILE) documents.releaseDocumentWithKey(file, key, scriptKind as ts.ScriptKind, impliedNodeFormat);
  },
};
// The declaration and lib files never change while the process runs: read each once, not once per edit.
const librarySnapshots = new Map<string, ts.IScriptSnapshot | undefined>();

function librarySnapshot(file: string): ts.IScriptSnapshot | undefined {
  if (!librarySnapshots.has(file)) {
    const text = file === DECLARATIONS_FILE ? declarations() : file === LIBRARY_FILE ? libraryText() : ts.sys.readFile(file);
    librarySnapshots.set(file, text === undefined ? undefined : ts.ScriptSnapshot.fromString(text));
  }
  return librarySnapshots.get(file);
}
let declarationsText: string | undefined;

function declarations(): string {
  declarationsText ??= checkedDeclarations(loadSchema());
  return declarationsText;
}

/**
 * One reward file with its own LanguageService. `update()` on each edit; `snapshot()` gives the program
 * state and position mapping the rules, hover and completion work on.
 */
export class RewardProject {
  readonly fileName: string;
  private version = 0;
  private text = '';
  private virtual = '';
  private userSource: ts.SourceFile | undefined;
  private snapshotText: ts.IScriptSnapshot = new EditedSnapshot('');
  private insertions: Insertion[] = [];
  private readonly service: ts.LanguageService;

  constructor(fileName: string, text: string) {
    this.fileName = path.resolve(fileName);
    const host: ts.LanguageServiceHost = {
      getScriptFileNames: () => [LIBRARY_FILE, DECLARATIONS_FILE, this.fileName],
      getScriptVersion: (f) => (f === this.fileName ? String(this.version) : '1'),
      getScriptSnapshot: (f) => {
        if (f === this.fileName) return this.snapshotText;
        return librarySnapshot(f);
      },
      getCompilationSettings: () => COMPILER_OPTIONS,
      getCurrentDirectory: () => path.dirname(this.fileName),
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: (f) => f === this.fileName || f === DECLARATIONS_FILE || f === LIBRARY_FILE || ts.sys.fileExists(f),
      readFile: (f) => (f === this.fileName ? this.virtual : (librarySnapshot(f)?.getText(0, librarySnapshot(f)!.getLength()) ?? ts.sys.readFile(f))),
    };
    this.service = ts.createLanguageService(host, registry);
    this.update(text);
  }

  /**
   * Set when the text nests deeper than TypeScript can take: the offset to report at. TypeScript then sees
   * an empty file (so nothing overflows), and lint, hover and completion answer with that one finding.
   */
  unanalysable: { offset: number; message: string } | undefined;

  update(text: string): void {
    if (text === this.text && this.version > 0) return;
    this.text = text;
    const deep = tooDeepAt(text);
    this.unanalysable = deep === undefined ? undefined : { offset: deep, message: TOO_DEEP_MESSAGE };
    if (deep !== undefined) {
      this.userSource = undefined;
      this.virtual = '';
      this.snapshotText = new EditedSnapshot('');
      this.insertions = [];
      this.version++;
      return;
    }
    // Re-parse only the edited span of the user's text (the language service does the same for the virtual one).
    this.userSource = this.userSource
      ? ts.updateSourceFile(this.userSource, text, changeRange(this.userSource.text, text))
      : ts.createSourceFile(this.fileName, text, ts.ScriptTarget.ES2022, false, this.fileName.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
    const { virtual, insertions } = annotate(this.fileName, this.userSource);
    this.virtual = virtual;
    this.snapshotText = new EditedSnapshot(virtual);
    this.insertions = insertions;
    this.version++;
  }

  get userText(): string {
    return this.text;
  }

  snapshot(): Snapshot {
    const program = this.service.getProgram();
    const sourceFile = program?.getSourceFile(this.fileName);
    if (!program || !sourceFile) throw new Error(`TypeScript lost ${this.fileName}`);
    return new Snapshot(this, program, sourceFile, this.text, this.insertions);
  }

  languageService(): ts.LanguageService {
    return this.service;
  }

  dispose(): void {
    this.service.dispose();
  }
}

/** A snapshot that tells TypeScript which span changed, so it re-parses incrementally. */
class EditedSnapshot implements ts.IScriptSnapshot {
  constructor(private readonly text: string) {}
  getText(start: number, end: number): string {
    return this.text.slice(start, end);
  }
  getLength(): number {
    return this.text.length;
  }
  getChangeRange(old: ts.IScriptSnapshot): ts.TextChangeRange | undefined {
    return old instanceof EditedSnapshot ? changeRange(old.text, this.text) : undefined;
  }
}

/** The span of `before` that was replaced to give `after` (common prefix and suffix kept). */
function changeRange(before: string, after: string): ts.TextChangeRange {
  let start = 0;
  while (start < before.length && start < after.length && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before.charCodeAt(before.length - 1 - end) === after.charCodeAt(after.length - 1 - end))
    end++;
  return ts.createTextChangeRange(ts.createTextSpan(start, before.length - start - end), after.length - start - end);
}

/** A consistent view of one version: program, checker, the virtual source file and position mapping. */
export class Snapshot {
  readonly checker: ts.TypeChecker;
  private readonly lineStarts: number[];
  private readonly aliasTypes = new Map<string, ts.Type | undefined>();

  constructor(
    readonly project: RewardProject,
    readonly program: ts.Program,
    readonly sourceFile: ts.SourceFile,
    readonly text: string,
    private readonly insertions: Insertion[],
  ) {
    this.checker = program.getTypeChecker();
    this.lineStarts = computeLineStarts(text);
  }

  /** The declared type of a schema type alias, resolved on first use (the name unions are never needed). */
  private aliasType(name: string): ts.Type | undefined {
    if (!this.aliasTypes.has(name)) {
      const decls = this.program.getSourceFile(DECLARATIONS_FILE);
      const decl = decls?.statements.find((st) => (ts.isTypeAliasDeclaration(st) || ts.isInterfaceDeclaration(st)) && st.name.text === name) as
        | ts.DeclarationStatement
        | undefined;
      this.aliasTypes.set(name, decl?.name ? this.checker.getTypeAtLocation(decl.name) : undefined);
    }
    return this.aliasTypes.get(name);
  }

  get isJs(): boolean {
    return this.sourceFile.fileName.endsWith('.js');
  }

  /** Virtual offset → user offset (positions inside an inserted annotation map to its insertion point). */
  toUser(offset: number): number {
    let shift = 0;
    for (const ins of this.insertions) {
      const start = ins.at + shift;
      if (offset < start) break;
      if (offset < start + ins.text.length) return ins.at;
      shift += ins.text.length;
    }
    return offset - shift;
  }

  /** User offset → virtual offset. */
  toVirtual(offset: number): number {
    let shift = 0;
    for (const ins of this.insertions) {
      if (ins.at > offset) break;
      shift += ins.text.length;
    }
    return offset + shift;
  }

  position(userOffset: number): { line: number; character: number } {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= userOffset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo, character: userOffset - this.lineStarts[lo]! };
  }

  offset(pos: { line: number; character: number }): number {
    const start = this.lineStarts[Math.min(pos.line, this.lineStarts.length - 1)] ?? 0;
    return Math.min(start + pos.character, this.text.length);
  }

  /** LSP range of a virtual span. */
  range(virtualStart: number, virtualEnd: number) {
    return { start: this.position(this.toUser(virtualStart)), end: this.position(this.toUser(virtualEnd)) };
  }

  nodeRange(node: ts.Node) {
    return this.range(node.getStart(this.sourceFile), node.getEnd());
  }

  /** The node's text as the user wrote it (without inserted annotations). */
  userTextOf(node: ts.Node): string {
    return this.text.slice(this.toUser(node.getStart(this.sourceFile)), this.toUser(node.getEnd()));
  }

  lineText(line: number): string {
    const start = this.lineStarts[line] ?? this.text.length;
    const end = this.lineStarts[line + 1] ?? this.text.length;
    return this.text.slice(start, end).replace(/\r?\n$/, '');
  }

  /** Is `type` (ignoring null/undefined) the schema type alias `name` (NearestBlocks, NearestEntry, …)? */
  isSchemaType(type: ts.Type, name: string): boolean {
    const alias = this.aliasType(name);
    if (!alias) return false;
    const is = (t: ts.Type) => t === alias || t.aliasSymbol?.name === name;
    if (is(type)) return true;
    // `T | undefined` (an optional entry): the one member left without null and undefined. Looking at the
    // members is what getNonNullableType does, without instantiating a new type each time it is asked.
    if (!type.isUnion()) return false;
    let left: ts.Type | undefined;
    for (const member of type.types) {
      if (member.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) continue;
      if (left) return false;
      left = member;
    }
    return !!left && is(left);
  }
}

function computeLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}
