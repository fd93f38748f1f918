// The page code of e2e/test_runs.py's rows, one export per row, on e2e/pages/index.html;
// called from Python by e2e/conftest.py's call(). Each returns JSON values for the row's
// assertions, which stay in Python.

/** The page's helpers (index.html): boot with the scripted model, settle a promise into {ok, ...}. */
const { boot } = window;

/** A scripted run over a file the page wrote: its events (iterated and subscribed), result and the file it wrote. */
export async function scriptedTurnSharingFiles(turns) {
  const h = await boot({ model: { api: "scripted", turns } });
  await h.fs.mkdir("seed");
  await h.fs.writeFile("seed/input.txt", "the answer is 42\n");
  const seen = [];
  h.subscribe((e) => seen.push(e.type));
  const run = h.prompt("Summarise seed/input.txt into out/answer.md");
  const events = [];
  for await (const e of run) events.push(e);
  const result = await run.done;
  const answer = await h.fs.readFile("out/answer.md", "utf8");
  h.close();
  return { events, result, answer, seen };
}

/** Six runs' results: cancelled mid-stream, then one, aborted by a signal, then one, aborted before it starts, cancelled in the same tick. */
export async function cancelMidRunThenMore() {
  const h = await boot({
    model: {
      api: "scripted",
      turns: [
        { text: "one two three four five six seven eight nine ten eleven twelve", delayMs: 50 },
        { text: "second run ok" },
        { text: "aborted by signal never finishes ".repeat(20), delayMs: 50 },
        { text: "third run ok" },
        { text: "never shown", delayMs: 50 },
        { text: "never shown either", delayMs: 50 },
      ],
    },
  });
  const run = h.prompt("long");
  let deltas = 0;
  for await (const e of run) {
    if (e.type === "text_delta" && ++deltas === 2) h.cancel();
  }
  const first = await run.done;
  const second = await h.prompt("again").done;
  const controller = new AbortController();
  const run3 = h.prompt("abortable", { signal: controller.signal });
  for await (const e of run3)
    if (e.type === "text_delta") {
      controller.abort();
      break;
    }
  const third = await run3.done;
  const fourth = await h.prompt("last").done;
  const early = h.prompt("aborted before it starts", { signal: AbortSignal.abort() });
  const fifth = await early.done;
  const sixth = h.prompt("cancelled in the same tick");
  h.cancel();
  const sixthDone = await sixth.done;
  h.close();
  return { first, second, third, fourth, fifth, sixth: sixthDone };
}

/** A prompt while one runs (busy), a tool call with arguments that are not JSON, a script run out of turns. */
export async function errorsEndingRuns() {
  const h = await boot({
    model: {
      api: "scripted",
      turns: [{ text: "slow", delayMs: 100 }, { toolCalls: [{ name: "write", arguments: "{broken" }] }, { text: "fine" }],
    },
  });
  const first = h.prompt("one");
  const busy = await h.prompt("two at once").done;
  await first.done;
  const run = h.prompt("bad args");
  const events = [];
  for await (const e of run) events.push(e);
  const exhausted = await h.prompt("no more turns").done;
  const alive = await h.fs.readdir(".");
  h.close();
  return { busy, events, exhausted, alive };
}

/** Boot, one run and one write: the requests they make are logged by the row. */
export async function promptAndWrite() {
  const h = await boot({ model: { api: "scripted", turns: [{ text: "hi" }] } });
  await h.prompt("hello").done;
  await h.fs.writeFile("x", "y");
  h.close();
}
