// biome-ignore-all lint/suspicious/noTemplateCurlyInString: bash lines, not templates
// shell/command-gate.mjs over the real just-bash (its Node bundle, the same version as
// the browser's): every command a line runs is asked about with its expanded words,
// however bash reached it, and a refusal stops exactly that command.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Bash, InMemoryFs } from "just-bash";
import { gateCommands } from "../../shell/command-gate.mjs";

async function run(line, refuse = /^touch /) {
  const fs = new InMemoryFs();
  const bash = new Bash({ fs, cwd: "/" });
  const asked = [];
  gateCommands(bash, async (command, argv) => {
    assert.equal(argv.join(" "), command);
    asked.push(command);
    return refuse.test(command) ? "denied" : null;
  });
  const result = await bash.exec(line);
  const made = (await fs.readdir("/")).filter((n) => /^p[0-9]*$/.test(n));
  return { asked, made, result };
}

const HIDDEN = [
  ["test -v 'a[$(touch /p1)]'; echo ok", "touch /p1"],
  ["printf -v 'a[$(touch /p2)]' x", "touch /p2"],
  ["x='a[$(touch /p3)]'; echo $(( x ))", "touch /p3"],
  ["echo ${x:-$(touch /p4)}", "touch /p4"],
  ["pwd() { touch /p5; }; pwd", "touch /p5"],
  ["eval \"$(printf 'tou%sch /p6' '')\"", "touch /p6"],
  ["x=$(touch /p7) true", "touch /p7"],
  ["cat <(touch /p8)", "touch /p8"],
  ["echo /p9 | xargs touch", "touch /p9"],
  ["for ((i=a[$(touch /p10)]; i<1; i++)); do echo; done", "touch /p10"],
];

for (const [line, hidden] of HIDDEN) {
  test(`asked as it runs: ${line}`, async () => {
    const { asked, made } = await run(line);
    assert.ok(asked.includes(hidden), JSON.stringify(asked));
    assert.deepEqual(made, []);
  });
}

test("a refusal is exit 126 with the reason, and the line goes on", async () => {
  const { result, asked } = await run("touch /p; echo after");
  assert.deepEqual(asked, ["touch /p", "echo after"]);
  assert.equal(result.stdout, "after\n");
  assert.match(result.stderr, /bash: touch: denied/);
});

test("an allowed command runs with its arguments as expanded", async () => {
  const { result, made, asked } = await run("f=/p1; touch $f; echo ${f}x", /^$/);
  assert.deepEqual(made, ["p1"]);
  assert.deepEqual(asked, ["touch /p1", "echo /p1x"]);
  assert.equal(result.exitCode, 0);
});

test("a command too long to check is refused without asking", async () => {
  const { asked, result } = await run("x=$(printf '%0100001d' 0); echo $x; echo short", /^$/);
  assert.deepEqual(asked, ["printf %0100001d 0", "echo short"]);
  assert.match(result.stderr, /bash: echo: the command is 100006 characters, more than 100000: too long to check/);
});
