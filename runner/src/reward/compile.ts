// Reward files: TypeScript (or JavaScript) → JavaScript with a source map, the reward contract checked on
// the syntax tree, and the one error type every reward failure becomes (compile, contract, run time), always
// located in the ORIGINAL file so the editor can underline it and the designer can be told where to fix.
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { SourceMapConsumer, type RawSourceMap } from 'source-map-js';
import { REWARD_FILE_EXTENSIONS } from '../records';
import { parameterNames } from '../schema';

/** `host`: the sandbox's host process died (a signal, an exit) while the reward itself did nothing wrong. */
export type RewardErrorKind = 'compile' | 'contract' | 'throw' | 'timeout' | 'memory' | 'bad-return' | 'host';

/** Any failure of a reward file, at a 1-based line and column of the original reward file. */
export class RewardError extends Error {
  constructor(
    readonly kind: RewardErrorKind,
    readonly file: string,
    readonly line: number,
    readonly column: number,
    /** The message without the location, e.g. "exceeded 50 ms". */
    readonly detail: string,
    /** The batch index of the environment whose call failed (run-time errors of `step`), else null. */
    readonly env: number | null = null,
  ) {
    super(`${file}:${line}:${column}: ${detail}${env === null ? '' : ` (env ${env})`}`);
    this.name = 'RewardError';
  }

  toJSON(): { kind: RewardErrorKind; file: string; line: number; column: number; env: number | null; message: string } {
    return { kind: this.kind, file: this.file, line: this.line, column: this.column, env: this.env, message: this.detail };
  }
}

export type RewardExportsKind = 'reward_function' | 'dense_sparse';

/** Where an exported reward function is declared (1-based), for errors that have no stack (time-out, memory). */
export interface EntryLocation {
  line: number;
  column: number;
}

export type RewardLanguage = 'typescript' | 'python';

export interface CompiledReward {
  file: string;
  /** TypeScript (and JavaScript) files compile to JavaScript; Python files run as they are (python-host.ts). */
  language: RewardLanguage;
  /** What the sandbox runs: CommonJS JavaScript (`exports.reward_function = ...`) without a sourceMappingURL
   * comment, or the Python file's text. */
  js: string;
  /** Maps `js` back to the original file (empty for Python, whose errors are located by the interpreter). */
  map: RawSourceMap;
  exportsKind: RewardExportsKind;
  /** The file's exported functions and where they are declared. */
  entries: Record<string, EntryLocation>;
  /** The file reads `damage_dealt` / `kill_entity`, which only attack tasks pass. */
  attack: boolean;
  /**
   * Every loop of the file, where it starts. The compiled code sets LOOP_MARKER to a loop's index + 1 at the
   * top of each of its iterations, so a call cut off by a time limit is reported at the loop that ran, not at
   * the function's declaration (an isolate terminated for time leaves no stack to read).
   */
  loops: EntryLocation[];
  /**
   * With `coverage`: every statement inside a function, where it starts and ends. The compiled code calls
   * COVERAGE_MARKER(index) before each of them, which the sandbox counts per call (the probes' "which line
   * ran, which line paid"). Empty without `coverage`: training runs the file uninstrumented.
   */
  statements: StatementLocation[];
}

export interface StatementLocation extends EntryLocation {
  endLine: number;
  endColumn: number;
}

export interface CompileOptions {
  /** Count each statement's runs in the sandbox (see CompiledReward.statements). */
  coverage?: boolean;
}

/** The global function the instrumented reward calls with a statement's index before running it. */
export const COVERAGE_MARKER = '__rewardsmith_ran';

/** The global the compiled reward sets to the 1-based index (in CompiledReward.loops) of the loop it is in. */
export const LOOP_MARKER = '__rewardsmith_loop';

/** Prepends `LOOP_MARKER = <index>;` to the body of every loop, recording where each loop is. */
function markLoops(at: (node: ts.Node) => EntryLocation, loops: EntryLocation[]): ts.TransformerFactory<ts.SourceFile> {
  return (context) => {
    const f = context.factory;
    const visit = (node: ts.Node): ts.Node => {
      if (!ts.isIterationStatement(node, false)) return ts.visitEachChild(node, visit, context);
      const index = loops.push(at(node));
      const loop = ts.visitEachChild(node, visit, context) as ts.IterationStatement;
      const mark = f.createExpressionStatement(f.createAssignment(f.createIdentifier(LOOP_MARKER), f.createNumericLiteral(index)));
      const body = f.createBlock([mark, ...(ts.isBlock(loop.statement) ? loop.statement.statements : [loop.statement])], true);
      if (ts.isForStatement(loop)) return f.updateForStatement(loop, loop.initializer, loop.condition, loop.incrementor, body);
      if (ts.isForInStatement(loop)) return f.updateForInStatement(loop, loop.initializer, loop.expression, body);
      if (ts.isForOfStatement(loop)) return f.updateForOfStatement(loop, loop.awaitModifier, loop.initializer, loop.expression, body);
      if (ts.isWhileStatement(loop)) return f.updateWhileStatement(loop, loop.expression, body);
      if (ts.isDoStatement(loop)) return f.updateDoStatement(loop, body, loop.expression);
      return loop;
    };
    return (file) => ts.visitNode(file, visit) as ts.SourceFile;
  };
}

/** Calls `COVERAGE_MARKER(<index>)` before every statement inside a function, recording where each statement is. */
function markStatements(span: (node: ts.Node) => StatementLocation, statements: StatementLocation[]): ts.TransformerFactory<ts.SourceFile> {
  return (context) => {
    const f = context.factory;
    const mark = (s: ts.Statement) =>
      f.createExpressionStatement(
        f.createCallExpression(f.createIdentifier(COVERAGE_MARKER), undefined, [f.createNumericLiteral(statements.push(span(s)) - 1)]),
      );
    const counted = (s: ts.Statement) => !ts.isFunctionDeclaration(s) && !ts.isEmptyStatement(s) && !ts.isBlock(s) && s.pos >= 0;
    const list = (statements: readonly ts.Statement[]) => statements.flatMap((s) => (counted(s) ? [mark(s), visitStatement(s)] : [visitStatement(s)]));
    // A statement in a single-statement position (`if (c) x = 1;`) becomes a block with its mark.
    const body = (s: ts.Statement): ts.Statement => (counted(s) ? f.createBlock([mark(s), visitStatement(s)], true) : visitStatement(s));
    let inFunction = 0;
    const visitStatement = (s: ts.Statement) => visit(s) as ts.Statement;
    const visit = (node: ts.Node): ts.Node => {
      if (ts.isFunctionLike(node)) {
        inFunction++;
        const out = ts.visitEachChild(node, visit, context);
        inFunction--;
        return out;
      }
      if (inFunction === 0) return ts.visitEachChild(node, visit, context);
      if (ts.isBlock(node)) return f.updateBlock(node, list(node.statements));
      if (ts.isCaseClause(node)) return f.updateCaseClause(node, visit(node.expression) as ts.Expression, list(node.statements));
      if (ts.isDefaultClause(node)) return f.updateDefaultClause(node, list(node.statements));
      if (ts.isIfStatement(node))
        return f.updateIfStatement(node, visit(node.expression) as ts.Expression, body(node.thenStatement), node.elseStatement && body(node.elseStatement));
      if (ts.isIterationStatement(node, false) && !ts.isBlock(node.statement)) {
        const loop = ts.visitEachChild(node, visit, context) as ts.IterationStatement;
        const wrapped = counted(node.statement) ? f.createBlock([mark(node.statement), loop.statement], true) : loop.statement;
        if (ts.isForStatement(loop)) return f.updateForStatement(loop, loop.initializer, loop.condition, loop.incrementor, wrapped);
        if (ts.isForInStatement(loop)) return f.updateForInStatement(loop, loop.initializer, loop.expression, wrapped);
        if (ts.isForOfStatement(loop)) return f.updateForOfStatement(loop, loop.awaitModifier, loop.initializer, loop.expression, wrapped);
        if (ts.isWhileStatement(loop)) return f.updateWhileStatement(loop, loop.expression, wrapped);
        if (ts.isDoStatement(loop)) return f.updateDoStatement(loop, wrapped, loop.expression);
        return loop;
      }
      return ts.visitEachChild(node, visit, context);
    };
    return (file) => ts.visitNode(file, visit) as ts.SourceFile;
  };
}

/**
 * Deepest bracket nesting a reward file may have. TypeScript's parser and checker recurse once per level and
 * overflow the stack somewhere past a thousand (less inside an editor's deeper stack); no reward needs more
 * than a few dozen, so past this the file gets one located error instead of a crash.
 */
export const MAX_NESTING = 256;

/**
 * Where a text first nests brackets deeper than MAX_NESTING (offset of the opening bracket), skipping
 * strings, template literals and comments; undefined when it does not. Linear and non-recursive.
 */
export function tooDeepAt(text: string): number | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2f /* / */ && text.charCodeAt(i + 1) === 0x2f) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === 0x2f && text.charCodeAt(i + 1) === 0x2a /* * */) {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === 0x22 || c === 0x27 || c === 0x60 /* " ' ` */) {
      // Quotes end at the line's end too (an apostrophe in a regex literal must not swallow the file).
      for (i++; i < text.length && text.charCodeAt(i) !== c && (c === 0x60 || text.charCodeAt(i) !== 0x0a); i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
    } else if (c === 0x28 || c === 0x5b || c === 0x7b /* ( [ { */) {
      if (++depth > MAX_NESTING) return i;
    } else if (c === 0x29 || c === 0x5d || c === 0x7d) {
      depth = Math.max(0, depth - 1);
    }
  }
  return undefined;
}

export const TOO_DEEP_MESSAGE = `brackets nest more than ${MAX_NESTING} levels deep here; the checker cannot analyse such a file (split the expression into named parts)`;

const ALL_PARAMETERS = parameterNames(true);
const BASIC_PARAMETERS = parameterNames(false);

/**
 * Compiles a reward file and checks the reward contract: it exports `reward_function` with the paper's
 * parameters in the paper's order (attack tasks add `damage_dealt, kill_entity`), or `dense` and `sparse`,
 * each taking a leading part of that parameter list. Throws a located RewardError ('compile' or 'contract').
 */
export function compileRewardFile(file: string, source: string = readFileSync(file, 'utf8'), options: CompileOptions = {}): CompiledReward {
  const deep = tooDeepAt(source);
  if (deep !== undefined) {
    const lines = source.slice(0, deep).split('\n');
    throw new RewardError('compile', file, lines.length, lines[lines.length - 1]!.length + 1, TOO_DEEP_MESSAGE);
  }
  try {
    return compileChecked(file, source, options);
  } catch (err) {
    // Any other structure deep enough to overflow TypeScript's recursion (a long else-if chain, say).
    if (err instanceof RangeError) throw new RewardError('compile', file, 1, 1, `the file is nested too deeply for the compiler (${err.message})`);
    throw err;
  }
}

function compileChecked(file: string, source: string, options: CompileOptions): CompiledReward {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, scriptKind(file));
  const at = (node: ts.Node | number) => {
    const pos = typeof node === 'number' ? node : node.getStart(sourceFile);
    const lc = sourceFile.getLineAndCharacterOfPosition(pos);
    return { line: lc.line + 1, column: lc.character + 1 };
  };
  const fail = (kind: RewardErrorKind, node: ts.Node | number, message: string): never => {
    const p = at(node);
    throw new RewardError(kind, file, p.line, p.column, message);
  };

  const span = (node: ts.Node): StatementLocation => {
    const start = at(node);
    const end = sourceFile.getLineAndCharacterOfPosition(node.getEnd());
    return { ...start, endLine: end.line + 1, endColumn: end.character + 1 };
  };

  const loops: EntryLocation[] = [];
  const statements: StatementLocation[] = [];
  const out = ts.transpileModule(source, {
    fileName: file,
    reportDiagnostics: true,
    // Statements are marked on the file as written, before the loop markers add statements of their own.
    transformers: { before: [...(options.coverage ? [markStatements(span, statements)] : []), markLoops(at, loops)] },
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      sourceMap: true,
      inlineSources: false,
      removeComments: false,
      allowJs: true,
    },
  });
  const syntaxError = out.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (syntaxError) fail('compile', syntaxError.start ?? 0, ts.flattenDiagnosticMessageText(syntaxError.messageText, '\n'));

  // The contract, read from the syntax tree: which functions are exported and with which parameters.
  const exported = new Map<string, ContractFunction>();
  for (const stmt of sourceFile.statements) {
    if (ts.isImportDeclaration(stmt) && !stmt.importClause?.isTypeOnly) {
      fail('contract', stmt, 'reward files run in a sandbox without modules: remove the import and write the code in this file');
    }
    if (ts.isImportEqualsDeclaration(stmt)) fail('contract', stmt, 'reward files run in a sandbox without modules: remove the import');
    if (!hasExportModifier(stmt)) continue;
    const parameters = (params: ts.NodeArray<ts.ParameterDeclaration>) =>
      params.map((p) => ({ name: ts.isIdentifier(p.name) && !p.dotDotDotToken ? p.name.text : null, at: at(p) }));
    if (ts.isFunctionDeclaration(stmt) && stmt.name) {
      exported.set(stmt.name.text, { at: at(stmt.name), params: parameters(stmt.parameters) });
    } else if (ts.isVariableStatement(stmt)) {
      for (const decl of stmt.declarationList.declarations) {
        const init = decl.initializer;
        if (ts.isIdentifier(decl.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
          exported.set(decl.name.text, { at: at(decl.name), params: parameters(init.parameters) });
        }
      }
    }
  }
  const contract = checkContract(file, exported, 'export');
  const js = out.outputText.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
  const map = JSON.parse(out.sourceMapText!) as RawSourceMap;
  return { file, language: 'typescript', js, map, ...contract, loops, statements };
}

/** A reward function the file defines at its top level: where, and its parameters (null: not a plain name). */
export interface ContractFunction {
  at: EntryLocation;
  params: { name: string | null; at: EntryLocation }[];
}

/**
 * The reward contract, one check for both languages: the file defines `reward_function` with the paper's
 * parameters in the paper's order (attack tasks add `damage_dealt, kill_entity`), or `dense` and `sparse`,
 * each taking a leading part of that parameter list. `verb` is how the file offers a function ("export" in
 * TypeScript, "define" in Python). Throws a located 'contract' RewardError.
 */
export function checkContract(
  file: string,
  functions: ReadonlyMap<string, ContractFunction>,
  verb: 'export' | 'define',
): Pick<CompiledReward, 'exportsKind' | 'entries' | 'attack'> {
  const fail = (at: EntryLocation, message: string): never => {
    throw new RewardError('contract', file, at.line, at.column, message);
  };
  const checkParameters = (name: string, fn: ContractFunction, allowed: string[][]) => {
    const expected = allowed[allowed.length - 1]!;
    // Messages list the attack parameters only to files that declare more than the basic ones.
    const shown = (fn.params.length > BASIC_PARAMETERS.length ? ALL_PARAMETERS : BASIC_PARAMETERS).join(', ');
    fn.params.forEach((p, i) => {
      if (p.name === null) fail(p.at, `${name}: parameter ${i + 1} must be a plain name (${expected[i] ?? 'none'}), not a pattern or rest parameter`);
      if (i >= expected.length) fail(p.at, `${name}: unexpected parameter ${i + 1} "${p.name}"; the reward takes (${shown})`);
      if (p.name !== expected[i])
        fail(p.at, `${name}: parameter ${i + 1} is "${p.name}" but must be "${expected[i]}"; the parameters are (${shown}) in this order`);
    });
    if (!allowed.some((a) => a.length === fn.params.length)) {
      const lengths = allowed.map((a) => a.length).join(' or ');
      fail(fn.at, `${name} takes ${lengths} parameters (${shown}), got ${fn.params.length}`);
    }
  };

  const reward = functions.get('reward_function');
  const dense = functions.get('dense');
  const sparse = functions.get('sparse');
  let exportsKind: RewardExportsKind;
  if (reward) {
    if (dense || sparse) fail((dense ?? sparse)!.at, `${verb} either reward_function or dense and sparse, not both`);
    checkParameters('reward_function', reward, [BASIC_PARAMETERS, ALL_PARAMETERS]);
    exportsKind = 'reward_function';
  } else if (dense || sparse) {
    const plural = verb === 'export' ? 'exports' : 'defines';
    if (!dense) fail(sparse!.at, `the file ${plural} sparse but no dense; ${verb} both (the runtime combines them with the scale rule)`);
    if (!sparse) fail(dense!.at, `the file ${plural} dense but no sparse; ${verb} both (the runtime combines them with the scale rule)`);
    // dense and sparse may take any leading part of the parameter list.
    const prefixes = ALL_PARAMETERS.map((_, i) => ALL_PARAMETERS.slice(0, i + 1));
    checkParameters('dense', dense!, [[], ...prefixes]);
    checkParameters('sparse', sparse!, [[], ...prefixes]);
    exportsKind = 'dense_sparse';
  } else {
    return verb === 'export'
      ? fail({ line: 1, column: 1 }, `a reward file must export function reward_function(${BASIC_PARAMETERS.join(', ')}), or functions dense and sparse`)
      : fail(
          { line: 1, column: 1 },
          `a reward file must define reward_function(${BASIC_PARAMETERS.join(', ')}) at its top level, or functions dense and sparse`,
        );
  }

  const entries: Record<string, EntryLocation> = {};
  let attack = false;
  for (const [name, fn] of functions) {
    if (name !== 'reward_function' && name !== 'dense' && name !== 'sparse') continue;
    entries[name] = fn.at;
    if (fn.params.length > BASIC_PARAMETERS.length) attack = true;
  }
  return { exportsKind, entries, attack };
}

function scriptKind(file: string): ts.ScriptKind {
  if (/\.jsx?$/i.test(file) || /\.[cm]js$/i.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function hasExportModifier(node: ts.Statement): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** Maps positions in the compiled JavaScript back to the reward file. */
export class SourcePositions {
  private consumer: SourceMapConsumer | null = null;
  constructor(private readonly compiled: CompiledReward) {}

  /** `line`, `column` 1-based in the compiled JS → 1-based in the original file, or null if unmapped. */
  original(line: number, column: number): EntryLocation | null {
    this.consumer ??= new SourceMapConsumer(this.compiled.map);
    for (const bias of [SourceMapConsumer.GREATEST_LOWER_BOUND, SourceMapConsumer.LEAST_UPPER_BOUND]) {
      const p = this.consumer.originalPositionFor({ line, column: column - 1, bias });
      if (p.line != null && p.line > 0) return { line: p.line, column: (p.column ?? 0) + 1 };
    }
    return null;
  }

  /**
   * The original location of the innermost reward-code frame in a V8 stack trace from the sandbox, where
   * the compiled reward ran under the script name `scriptName`.
   */
  fromStack(stack: string, scriptName: string): EntryLocation | null {
    const escaped = scriptName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const frame = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(stack);
    return frame ? this.original(Number(frame[1]), Number(frame[2])) : null;
  }
}

const OTHER_LANGUAGES: Readonly<Record<string, string>> = { '.lua': 'Lua', '.rs': 'Rust', '.java': 'Java', '.cpp': 'C++', '.c': 'C' };

/**
 * Reads a reward file named on the command line, or says plainly what is wrong with the name: a missing
 * file, a folder, a language the runner does not run (`.lua`: "Lua rewards are not supported yet").
 */
export function readRewardFile(file: string): string {
  const ext = /\.[^./\\]+$/.exec(file)?.[0].toLowerCase() ?? '';
  const language = OTHER_LANGUAGES[ext];
  if (language)
    throw new UnreadableRewardFile(
      `${file}: ${language} rewards are not supported yet; write the reward in TypeScript (*.reward.ts), JavaScript (*.reward.js) or Python (*.reward.py)`,
    );
  if (!REWARD_FILE_EXTENSIONS.includes(ext)) throw new UnreadableRewardFile(`${file}: not a reward file (expected a .ts, .js or .py file)`);
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a folder, not a reward file'
          : code === 'EACCES'
            ? 'permission denied'
            : (err as Error).message;
    throw new UnreadableRewardFile(`${file}: ${why}`);
  }
}

/** A reward file that cannot be read or is not a reward file at all (not a located reward error). */
export class UnreadableRewardFile extends Error {
  override readonly name = 'UnreadableRewardFile';
}
