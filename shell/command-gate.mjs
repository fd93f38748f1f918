// The page's `bash` rule at the point of effect, in the sandbox: every command of
// just-bash's registry (coreutils, python3, pip, …) asks before it runs, with its name
// and its expanded arguments, whatever runs it: a command substitution (in an arithmetic
// subscript, a parameter expansion, an assignment), a function, a subshell, a pipeline,
// `eval`, `source`, `xargs`, `find -exec`. Shell builtins (cd, export, read, test, …)
// change only the shell's own state and are not asked; what they run is. The harness
// decides (harness/policy/enforce.py): the sandbox holds no rule, so nothing here can loosen
// one, and code the model runs here can at most skip asking, which gains it nothing the
// apply step (the write rule on every path) does not check again.

const MAX_GATE_CHARS = 100_000; // of a command checked (a longer one is refused)

/**
 * Wrap each command of `bash`'s registry so that it runs only when `ask(text, argv)`
 * resolves with null (`text`: the words joined by spaces, as the rules match them;
 * `argv`: the words one by one); a refusal (a string) is the command's exit 126 with the
 * reason on stderr. A command too long to check is refused without asking.
 * The registry is just-bash's private `commands` Map (3.4.2, pinned in package.json;
 * tests/js-unit/command-gate.test.mjs holds it to that).
 * @param {object} bash a just-bash `Bash`
 * @param {(command: string, argv: string[]) => Promise<string | null>} ask
 */
export function gateCommands(bash, ask) {
  // biome-ignore lint/complexity/useLiteralKeys: just-bash's registry is not public
  const registry = bash["commands"];
  if (!(registry instanceof Map) || registry.size === 0) throw new Error("just-bash's command registry is not where it was");
  for (const [name, entry] of registry) {
    const run = entry.execute;
    if (typeof run !== "function") throw new Error(`just-bash's command ${name} has no execute`);
    entry.execute = async (args, ctx) => {
      const argv = [name, ...args.map(String)];
      const text = argv.join(" ");
      const refusal =
        text.length > MAX_GATE_CHARS
          ? `the command is ${text.length} characters, more than ${MAX_GATE_CHARS}: too long to check against the page's rules`
          : await ask(text, argv);
      if (typeof refusal === "string") return { stdout: "", stderr: `bash: ${name}: ${refusal}\n`, exitCode: 126 };
      return run(args, ctx);
    };
  }
}
