// Rewardsmith's extensions to the Language Server Protocol, shared by the server and any client (the VS Code
// extension imports this module; a Neovim/Helix user can send the same JSON). It belongs to neither side: the
// language server, the extension and the runner's critic (which builds the critique result) import it, and
// it imports nothing of theirs. Everything here is plain protocol data: no VS Code types, no server
// internals. Keep it stable: add fields, never rename them.
import { NotificationType, RequestType } from 'vscode-languageserver-protocol';
import type { Range, TextDocumentIdentifier } from 'vscode-languageserver-protocol';

/** `source` of the diagnostics each producer publishes; clients can filter or style by it. */
export const DIAGNOSTIC_SOURCE = {
  /** Static checks (schema rules and TypeScript's own errors). */
  lint: 'rewardsmith',
  /** The LLM critic's line-anchored findings. */
  critic: 'reward-critic',
  /** The trajectory analyzer's suggestions pushed by the client. */
  analyzer: 'reward-analyzer',
  /** The probes: the reward run on its task's probe bank in the sandbox (on save and after a pause in typing). */
  probe: 'rewardsmith-probe',
} as const;

// ---------------------------------------------------------------------------------------------------------
// rewardsmith/critique: ask the configured LLM critic to review a document the server has open.

export interface CritiqueParams {
  textDocument: TextDocumentIdentifier;
  /** Task id (e.g. `approach-tree`) whose description the critic gets. Default: the file's `// task: <id>`
   * header line, else the `rewardsmith.defaultTask` setting, else none. */
  task?: string;
  /** Ask the LLM again even if this exact content was reviewed before. */
  force?: boolean;
}

/** One critic finding as published; lines are LSP's 0-based. */
export interface CritiqueFinding {
  range: Range;
  severity: 'error' | 'warning' | 'information';
  message: string;
}

/** The review (or why none came back) and its line-anchored findings. */
export type CritiqueResult =
  | {
      status: 'ok';
      /** The paper's critic verdict. */
      success: boolean;
      reasoning: string;
      critique: string | null;
      findings: CritiqueFinding[];
      /** True when served from the content-hash cache without calling the LLM. */
      cached: boolean;
      model: string;
    }
  | {
      status: 'error';
      /** Why no review came back, written for the user (e.g. "No LLM configured: set OPENAI_API_KEY …"). */
      message: string;
      /** `not-configured`: no key/base URL; `llm`: the LLM failed after retries (timeout, 429/5xx, malformed answer);
       * `bad-task`: the task id/file named by the request or the `// task:` header cannot be loaded;
       * `no-document`: the server does not have the document open. */
      kind: 'not-configured' | 'llm' | 'bad-task' | 'no-document';
    };

export const critiqueRequest = new RequestType<CritiqueParams, CritiqueResult, void>('rewardsmith/critique');

/** Drop the critic's findings for a document (they also go away by themselves when their lines change). */
export const clearCritiqueNotification = new NotificationType<{ textDocument: TextDocumentIdentifier }>('rewardsmith/clearCritique');

// ---------------------------------------------------------------------------------------------------------
// rewardsmith/setSuggestions: the client pushes the trajectory analyzer's suggestions for a document; the server
// publishes them as diagnostics (source `reward-analyzer`) and offers the code actions
// "Apply suggested patch" (a WorkspaceEdit whose change annotation needs confirmation, so VS Code previews it
// as a diff) and "Dismiss".

export interface AnalyzerSuggestion {
  /** Stable id chosen by the client (e.g. `<run>/<index>`); used by Dismiss. */
  id: string;
  message: string;
  /** Evidence text (episodes, steps) shown in the diagnostic's related message. */
  evidence?: string;
  /** Where to show it; default: the line of `reward_function`. */
  range?: Range;
  /** Unified diff against the document (as `rewardsmith analyze` writes in suggestions.json). A suggestion
   * with a diff that no longer applies is still shown, without the Apply action. */
  diff?: string;
}

export interface SetSuggestionsParams {
  textDocument: TextDocumentIdentifier;
  /** Replaces the document's previous set; an empty list clears it. */
  suggestions: AnalyzerSuggestion[];
}

export const setSuggestionsNotification = new NotificationType<SetSuggestionsParams>('rewardsmith/setSuggestions');

/** Server → client: the user dismissed (or applied) a suggestion through a code action, so a tree view can drop it. */
export const suggestionResolvedNotification = new NotificationType<{ textDocument: TextDocumentIdentifier; id: string; how: 'applied' | 'dismissed' }>(
  'rewardsmith/suggestionResolved',
);

/**
 * Commands the server executes (advertised in `executeCommandProvider`; vscode-languageclient registers them
 * as VS Code commands, so the extension must not register the same names). Arguments: one object.
 */
/**
 * Commands the client runs (offered in code actions only to a client that says in its initializationOptions
 * that it has them): `{ uri: string, episode: number }` plays probe episode `episode` (1-based) of the file's
 * task with the file's rewards (`rewardsmith playback FILE --probe N`).
 */
export const CLIENT_COMMANDS = { playProbeEpisode: 'rewardsmith.playProbeEpisode' } as const;

/** What a client tells the server at `initialize`. */
export interface RewardsmithInitializationOptions {
  /** The client runs CLIENT_COMMANDS.playProbeEpisode (VS Code's extension plays it in its dashboard). */
  playProbeEpisode?: boolean;
}

export const SERVER_COMMANDS = {
  /** `{ uri: string, id: string }`: forget an analyzer suggestion and republish. */
  dismissSuggestion: 'rewardsmith.server.dismissSuggestion',
  /** `{ uri: string, id: string }`: sent after the Apply edit so the suggestion is dropped. */
  suggestionApplied: 'rewardsmith.server.suggestionApplied',
} as const;

// ---------------------------------------------------------------------------------------------------------
// LLM settings. The server reads `workspace/configuration` section `rewardsmith.llm` (baseUrl, model,
// temperature, timeoutMs), overriding the env vars OPENAI_BASE_URL / REWARDSMITH_MODEL. The API key is not a
// setting (the extension keeps it in SecretStorage): the client sends it with this notification, and it
// overrides OPENAI_API_KEY. `null` forgets a previously sent key.

export const CONFIGURATION_SECTION = 'rewardsmith.llm';

export interface LlmSettings {
  baseUrl?: string;
  model?: string;
  temperature?: number;
  timeoutMs?: number;
}

export const setLlmApiKeyNotification = new NotificationType<{ apiKey: string | null }>('rewardsmith/setLlmApiKey');
