// The page code of e2e/test_file_changes.py, on e2e/pages/index.html: every file_change
// the page hears through h.subscribe, from every source, in the order it heard them.

/** The page's helpers (index.html): boot with the scripted model. */
const { boot } = window;

/** A zip of one file ("z/zipped.txt": "z"), made by the test in Python, as base64. */
const unzip = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** One run whose tool calls change files every way (a built-in tool, a shell command,
 * python3, a page tool writing through h.fs), then h.fs calls outside the run and an
 * importZip: what h.subscribe heard (file_change and tool_end, in order). */
export async function everySource(zip) {
  const turns = [
    {
      toolCalls: [
        { name: "write", arguments: { path: "tool.txt", content: "by the write tool" } },
        { name: "bash", arguments: { command: "mkdir -p sh && echo hi > sh/out.txt && rm tool.txt" } },
        { name: "bash", arguments: { command: "python3 -c \"[open(f'py{i}.txt', 'w').write(str(i)) for i in range(3)]\"" } },
        { name: "save_note", arguments: { text: "through h.fs" } },
      ],
    },
    { text: "done" },
  ];
  const tools = [
    {
      name: "save_note",
      description: "Save a note through h.fs",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      run: async ({ text }, { fs }) => {
        await fs.writeFile("note.txt", text);
        return "saved";
      },
    },
  ];
  const h = await boot({ shell: true, tools, model: { api: "scripted", turns } });
  const heard = [];
  h.subscribe((e) => {
    if (e.type === "file_change" || e.type === "tool_end") heard.push(e);
  });
  await h.prompt("change files").done;
  await h.fs.writeFile("page.txt", "by the page");
  await h.fs.rename("page.txt", "renamed.txt");
  await h.fs.mkdir("d/e", { recursive: true });
  await h.fs.rm("d", { recursive: true });
  await h.fs.importZip(unzip(zip));
  await h.fs.readFile("renamed.txt"); // changes nothing: nothing heard
  h.close();
  return heard.map(({ type, runId, seq, path, kind, from, entry, size, callId, tool, name }) => ({
    type,
    seq,
    runId: runId ?? null,
    path: path ?? null,
    kind: kind ?? null,
    from: from ?? null,
    entry: entry ?? null,
    size: size ?? null,
    callId: callId ?? null,
    tool: tool ?? name ?? null,
  }));
}
