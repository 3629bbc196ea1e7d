// The `rewardsmith` program: runs the dispatcher on the command line and exits with its code. Anything that
// escapes a command's own error handling is still one line in the common format, without a stack.
import { runCli } from './dispatch';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`rewardsmith: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
