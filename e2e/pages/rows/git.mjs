// The page code of e2e/test_git.py's rows, one export per row, on e2e/pages/index.html;
// called from Python by e2e/conftest.py's call(). Each returns JSON values for the row's
// assertions, which stay in Python.

import { sentToWorkers as sent } from "./worker-messages.mjs";

/** The page's helpers (index.html): boot with the scripted model. */
const { boot } = window;

const bash = (command) => ({ name: "bash", arguments: { command } });

/** One run per list of commands; each run's tool outputs, and its id. */
async function runs(h, prompts) {
  const out = [];
  for (const prompt of prompts) {
    const run = h.prompt(prompt);
    const outputs = [];
    for await (const e of run) if (e.type === "tool_end") outputs.push({ output: e.output, isError: e.isError });
    await run.done;
    out.push({ id: run.id, outputs });
  }
  return out;
}

const toBase64 = (bytes) => {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};

/** The agent works in a repository with git in the shell (as the page's author, then as
 * `git config` says), a hook in .git/hooks that never runs, a revert of the run that
 * made a commit; the workspace exported as a zip for the host's git to read. */
export async function gitInTheShell() {
  const turns = [
    {
      toolCalls: [
        bash(
          "git init && printf 'hello\\n' > a.txt && mkdir -p src && echo 'x = 1' > src/b.py && git add -A && git commit -m 'first commit'",
        ),
        bash(
          "printf '#!/bin/sh\\necho ran > /work/HOOK_RAN\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && git status --short",
        ),
        bash(
          "git checkout -b feature && echo more >> a.txt && git commit -am 'second on feature' && git checkout main && echo 'y = 2' >> src/b.py && git commit -qam 'main moves' && git merge feature -m 'merge feature' && git tag v1 && git tag -a v2 -m 'version two'",
        ),
        bash("echo 'stash me' >> src/b.py && git stash && git stash list && git status --short"),
        bash(
          "git config user.name 'Configured Name' && git config user.email configured@example.com && echo c >> a.txt && git commit -qam third && git log -1 --format='%an <%ae>'",
        ),
        bash("git log --oneline --all --decorate && git diff HEAD~1 --stat && ls -a"),
      ],
    },
    { text: "committed" },
    { toolCalls: [bash("echo later >> a.txt && git commit -qam 'in a later run' && git log --oneline -n 2")] },
    { text: "one more" },
    {
      toolCalls: [
        bash("git log --oneline --all --decorate"),
        bash("git status"),
        bash("git diff HEAD~2 --stat"),
        bash("git log --graph --oneline; git rebase -i HEAD~2"),
      ],
    },
    { text: "looked" },
  ];
  const h = await boot({
    shell: true,
    git: { author: { name: "Page Author", email: "page@example.com" } },
    model: { api: "scripted", turns },
  });
  const [first, second] = await runs(h, ["make a repository", "commit once more"]);
  const zipBefore = toBase64(await h.fs.exportZip());
  const reverted = await h.revert(second.id);
  const [third] = await runs(h, ["look"]);
  const zip = toBase64(await h.fs.exportZip());
  const hook = await h.fs.stat("HOOK_RAN").then(
    () => true,
    () => false,
  );
  h.close();
  return { first: first.outputs, second: second.outputs, third: third.outputs, reverted: reverted.changes.length, zipBefore, zip, hook };
}

/** A remote through the page: clone from the loopback git server (credentials from
 * git.auth), push a branch (asked for by the bash rule), a forged push from python3,
 * a fetch; then a harness whose page allows no network tries to clone. */
export async function remotes(base, password) {
  const repo = `${base}/project.git`;
  const turns = [
    {
      toolCalls: [
        bash(`git clone ${repo} && cd project && git log --oneline && git branch -a`),
        bash(
          "cd project && git checkout -b agent-work && echo 'print(2)' >> app.py && git commit -qam 'agent change' && git push -u origin agent-work",
        ),
        bash(
          `cd project && python3 -c "import pyharness_net as n; print(n.fetch('${repo}/git-receive-pack', method='POST', headers={'content-type': 'application/x-git-receive-pack-request'}, body='0000').status)"`,
        ),
        bash("cd project && git fetch && git status -sb && git log --oneline --all --decorate"),
      ],
    },
    { text: "pushed" },
  ];
  const asked = [];
  const approvals = [];
  const h = await boot({
    shell: true,
    network: { allow: [repo] },
    git: {
      author: { name: "Page Author", email: "page@example.com" },
      auth: async (url) => {
        asked.push(url);
        return { username: "agent", password };
      },
    },
    permissions: { bash: { "*": "allow", "git push *": "ask" } },
    onApproval: (request) => {
      approvals.push({ tool: request.tool, subject: request.subject });
      return "once";
    },
    model: { api: "scripted", turns },
  });
  const [run] = await runs(h, ["clone, change, push"]);
  h.close();
  const closed = await boot({
    workspace: "git-no-network",
    shell: true,
    model: { api: "scripted", turns: [{ toolCalls: [bash(`git clone ${repo}`)] }, { text: "no" }] },
  });
  const [refused] = await runs(closed, ["clone"]);
  closed.close();
  return { outputs: run.outputs, refused: refused.outputs[0], asked, approvals, sent };
}

/** A repository the host's git made, imported with h.fs.importZip: these commands' output
 * in the sandbox. */
export async function importedRepository(zipBase64, commands) {
  const bytes = Uint8Array.from(atob(zipBase64), (c) => c.charCodeAt(0));
  const h = await boot({
    workspace: "git-imported",
    shell: true,
    model: { api: "scripted", turns: [{ toolCalls: commands.map(bash) }, { text: "read" }] },
  });
  await h.fs.importZip(bytes);
  const [run] = await runs(h, ["read the history"]);
  h.close();
  return run.outputs;
}

/** A command's write budget holds for git's objects: with maxOutputBytes 64 KiB, adding a
 * 300 KB file of random bytes (its object as big) fails, and the workspace is intact. */
export async function hugeObject() {
  const h = await boot({
    workspace: "git-huge",
    shell: { maxOutputBytes: 65536 },
    model: {
      api: "scripted",
      turns: [
        { toolCalls: [bash("git init -q && echo ok > small.txt && git add small.txt && git commit -qm small && git add big.bin")] },
        { text: "no" },
        { toolCalls: [bash("git status --short && git log --oneline")] },
        { text: "ok" },
      ],
    },
  });
  const big = new Uint8Array(300_000);
  for (let i = 0; i < big.length; i += 65536) crypto.getRandomValues(big.subarray(i, Math.min(big.length, i + 65536)));
  await h.fs.writeFile("big.bin", big);
  const [first, after] = await runs(h, ["add it", "look"]);
  const size = (await h.fs.stat("big.bin")).size;
  h.close();
  return { add: first.outputs[0], after: after.outputs[0], size };
}

/** git's reading commands in a plan run (which may change nothing): a repository made in
 * a normal run, a file changed by the page, then `git status`, `git diff` and `git log`
 * in a plan run, in its fresh sandbox (every file's time new to the index). */
export async function readingInAPlanRun() {
  const h = await boot({
    workspace: "git-plan",
    shell: true,
    plan: { commands: ["git status*", "git diff*", "git log*"] },
    model: {
      api: "scripted",
      turns: [
        { toolCalls: [bash("git init -q && echo one > a.txt && git add a.txt && git commit -qm one")] },
        { text: "made" },
        { toolCalls: [bash("git status --short && git diff --stat && git log --oneline")] },
        { text: "read" },
      ],
    },
  });
  const [made] = await runs(h, ["make it"]);
  await h.fs.writeFile("a.txt", "two\n");
  const run = h.prompt("look", { mode: "plan" });
  const outputs = [];
  for await (const e of run) if (e.type === "tool_end") outputs.push({ output: e.output, isError: e.isError });
  const done = await run.done;
  h.close();
  return { made: made.outputs, read: outputs, done };
}
