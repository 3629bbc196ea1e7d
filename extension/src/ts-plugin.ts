// A TypeScript server plugin (contributed through package.json `typescriptServerPlugins`, loaded by VS Code's
// own TypeScript service): on reward files it keeps TypeScript's editor features from breaking the reward
// contract. The runtime calls `reward_function` (or `dense`/`sparse`) with the schema's values by position,
// so a parameter the body never reads is still part of the contract: TypeScript's "Remove unused
// declaration", "Delete all unused declarations", "Prefix with an underscore", "Convert parameters to
// destructured object" and renames of such a parameter would each shift or rename what the runtime passes.
// Here those fixes and refactors are withheld on the contract functions' parameter lists, a rename of a
// contract parameter is refused with the reason, and the "declared but never read" hints on those
// parameters are dropped, so the editor does not fade them as if they could go.
// The module is loaded by tsserver with its own TypeScript: only types are imported here.
import type * as ts from 'typescript';

const REWARD_FILE = /\.reward\.[cm]?[tj]s$/;
/** The functions the runtime calls with the contract's parameters, by position. */
const CONTRACT_FUNCTIONS = new Set(['reward_function', 'dense', 'sparse']);
/** "'x' is declared but its value is never read", "'x' is declared but never used". */
const UNUSED_CODES = new Set([6133, 6196]);
const DESTRUCTURE_REFACTOR = 'Convert parameters to destructured object';
export const RENAME_REFUSED = "A parameter of the reward contract keeps its name: the runtime passes the schema's values to reward_function by position.";

interface Span {
  start: number;
  end: number;
}

/** The contract functions' parameter lists (from the first parameter to the last) and their names. */
interface Contract {
  /** The contract functions, whole. */
  functions: Span[];
  /** Their parameter lists, inside the parentheses. */
  lists: Span[];
  /** Their parameters' names. */
  names: Span[];
}

/** The contract functions of a reward file: where they are, their parameter lists and parameter names. */
function contractParameters(tsm: typeof ts, sf: ts.SourceFile): Contract {
  const functions: Span[] = [];
  const lists: Span[] = [];
  const names: Span[] = [];
  const add = (fn: ts.SignatureDeclaration) => {
    const params = fn.parameters;
    functions.push({ start: fn.getStart(sf), end: fn.end });
    // An empty list still counts (a parameter typed into it would be positional): its parentheses' inside.
    lists.push({ start: params.pos, end: params.end });
    for (const p of params) names.push({ start: p.name.getStart(sf), end: p.name.end });
  };
  for (const st of sf.statements) {
    if (tsm.isFunctionDeclaration(st) && st.name && CONTRACT_FUNCTIONS.has(st.name.text)) add(st);
    if (tsm.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        let init = d.initializer;
        while (init && tsm.isParenthesizedExpression(init)) init = init.expression;
        if (tsm.isIdentifier(d.name) && CONTRACT_FUNCTIONS.has(d.name.text) && init && (tsm.isArrowFunction(init) || tsm.isFunctionExpression(init))) add(init);
      }
    }
  }
  return { functions, lists, names };
}

const touches = (spans: Span[], start: number, end: number) => spans.some((s) => start <= s.end && end >= s.start);

/**
 * Wraps a LanguageService so that, on reward files, nothing it offers removes, renames, prefixes or
 * restructures a contract function's parameters. Other files and other fixes pass through unchanged.
 */
export function contractSafeLanguageService(tsm: typeof ts, service: ts.LanguageService): ts.LanguageService {
  const proxy = Object.create(null) as ts.LanguageService;
  for (const key of Object.keys(service) as (keyof ts.LanguageService)[]) {
    const member = service[key];
    // biome-ignore lint/suspicious/noExplicitAny: a pass-through of every LanguageService method
    (proxy as any)[key] = typeof member === 'function' ? (...args: unknown[]) => (member as (...a: unknown[]) => unknown).apply(service, args) : member;
  }
  const contractOf = (fileName: string) => {
    if (!REWARD_FILE.test(fileName)) return undefined;
    const sf = service.getProgram()?.getSourceFile(fileName);
    return sf && contractParameters(tsm, sf);
  };
  const keepDiagnostic = <D extends ts.Diagnostic>(fileName: string, diagnostics: D[]): D[] => {
    const contract = contractOf(fileName);
    if (!contract) return diagnostics;
    return diagnostics.filter((d) => !(UNUSED_CODES.has(d.code) && d.start !== undefined && touches(contract.names, d.start, d.start + (d.length ?? 0))));
  };
  const editsContract = (contract: Contract, changes: readonly ts.FileTextChanges[], fileName: string) =>
    changes.some((c) => c.fileName === fileName && c.textChanges.some((t) => touches(contract.lists, t.span.start, t.span.start + t.span.length)));

  proxy.getSuggestionDiagnostics = (fileName) => keepDiagnostic(fileName, service.getSuggestionDiagnostics(fileName));
  // With noUnusedParameters on, the same finding is an error among the semantic diagnostics.
  proxy.getSemanticDiagnostics = (fileName) => keepDiagnostic(fileName, service.getSemanticDiagnostics(fileName));

  proxy.getCodeFixesAtPosition = (fileName, start, end, errorCodes, formatOptions, preferences) => {
    const fixes = service.getCodeFixesAtPosition(fileName, start, end, errorCodes, formatOptions, preferences);
    const contract = contractOf(fileName);
    if (!contract) return fixes;
    // A fix that edits a contract parameter list is withheld. One that does not keeps its own edit but loses
    // its "fix all" when that would touch the contract (an unused local's "Delete all unused declarations"
    // also deletes the unused parameters).
    return fixes
      .filter((fix) => !editsContract(contract, fix.changes, fileName))
      .map((fix) => {
        if (!fix.fixId) return fix;
        const all = service.getCombinedCodeFix({ type: 'file', fileName }, fix.fixId, formatOptions, preferences);
        return editsContract(contract, all.changes, fileName) ? { ...fix, fixId: undefined, fixAllDescription: undefined } : fix;
      });
  };

  proxy.getCombinedCodeFix = (scope, fixId, formatOptions, preferences) => {
    const combined = service.getCombinedCodeFix(scope, fixId, formatOptions, preferences);
    const contract = contractOf(scope.fileName);
    if (!contract) return combined;
    // Keep the parts of a "fix all" that leave the contract alone.
    const changes = combined.changes.map((c) =>
      c.fileName === scope.fileName
        ? { ...c, textChanges: c.textChanges.filter((t) => !touches(contract.lists, t.span.start, t.span.start + t.span.length)) }
        : c,
    );
    return { ...combined, changes: changes.filter((c) => c.textChanges.length > 0) };
  };

  proxy.getApplicableRefactors = (fileName, positionOrRange, preferences, triggerReason, kind, includeInteractive) => {
    const refactors = service.getApplicableRefactors(fileName, positionOrRange, preferences, triggerReason, kind, includeInteractive);
    const contract = contractOf(fileName);
    if (!contract) return refactors;
    const [start, end] = typeof positionOrRange === 'number' ? [positionOrRange, positionOrRange] : [positionOrRange.pos, positionOrRange.end];
    return touches(contract.functions, start, end) ? refactors.filter((r) => r.name !== DESTRUCTURE_REFACTOR) : refactors;
  };

  proxy.getRenameInfo = (fileName, position, preferences) => {
    const contract = contractOf(fileName);
    if (contract) {
      const sf = service.getProgram()?.getSourceFile(fileName);
      const declaration = sf && parameterDeclarationAt(tsm, service, sf, position);
      if (declaration && touches(contract.names, declaration.start, declaration.end)) return { canRename: false, localizedErrorMessage: RENAME_REFUSED };
    }
    return service.getRenameInfo(fileName, position, preferences as ts.RenameInfoOptions);
  };
  return proxy;
}

/** The name span of the parameter that the identifier at `position` declares or refers to, if it is one. */
function parameterDeclarationAt(tsm: typeof ts, service: ts.LanguageService, sf: ts.SourceFile, position: number): Span | undefined {
  let identifier: ts.Identifier | undefined;
  const visit = (n: ts.Node) => {
    if (identifier || position < n.getStart(sf) || position > n.end) return;
    if (tsm.isIdentifier(n)) identifier = n;
    else tsm.forEachChild(n, visit);
  };
  visit(sf);
  if (!identifier) return undefined;
  const symbol = service.getProgram()?.getTypeChecker().getSymbolAtLocation(identifier);
  const decl = symbol?.valueDeclaration;
  if (!decl || !tsm.isParameter(decl)) return undefined;
  return { start: decl.name.getStart(sf), end: decl.name.end };
}

/** tsserver's plugin entry point: `require('rewardsmith-ts-plugin')({ typescript })`. */
export default function init(modules: { typescript: typeof ts }): ts.server.PluginModule {
  return {
    create: (info) => contractSafeLanguageService(modules.typescript, info.languageService),
  };
}
