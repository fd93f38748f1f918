// The offline demo: files seeded into /work, and the scripted model's turns. The model
// is scripted (it replays these turns whatever is typed), but every tool call really
// runs: Python in the worker writes, edits and runs the files you see.

export const SEED = {
  "README.md": `# Demo workspace

These files live in your browser: in the memory of a Web Worker that runs Python
(Pyodide) and the pyharness agent. Upload your own with the files panel.
`,
  "data/sales.csv": `date,region,product,amount
2026-01-03,North,widgets,120
2026-01-04,South,gadgets,80
2026-01-07,East,widgets,200
2026-01-09,North,gizmos,45
2026-01-12,West,gadgets,150
2026-01-15,South,widgets,95
2026-01-18,East,gizmos,60
2026-01-21,North,widgets,130
2026-01-24,West,widgets,110
2026-01-27,South,gizmos,70
2026-01-29,East,gadgets,90
2026-01-31,West,gizmos,40
`,
};

export const SUGGESTIONS = ["Summarise data/sales.csv by region with a Python script", "Add a test for summarize.py and run it"];

/** Suggestions for a real model: the same seeded files, open-ended asks. */
export const LIVE_SUGGESTIONS = [
  "Summarise data/sales.csv by region with a Python script and save a report",
  "Write fizzbuzz.py, run it in the shell and show me the first 15 lines",
];

const SUMMARIZE = `import csv
import sys
from collections import defaultdict


def totals(path):
    """The sum of the amount column per region."""
    sums = defaultdict(int)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            sums[row["region"]] += int(row["amount"])
    return dict(sums)


if __name__ == "__main__":
    for region, total in totals(sys.argv[1]).items():
        print(f"{region:<6} {total:>5}")
`;

const TEST = `import os
import tempfile

from summarize import totals


def test_totals():
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("date,region,product,amount\\n1,A,x,2\\n2,B,y,3\\n3,A,z,5\\n")
    try:
        assert totals(f.name) == {"A": 7, "B": 3}
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    test_totals()
    print("test_totals passed")
`;

const SLOW = 18; // ms per streamed word

/** The scripted conversation (it uses the shell, which `pyharness build` always bundles). */
export function demoTurns() {
  return [
    // Run 1: summarise the CSV.
    {
      text: "I'll look at the workspace and the data first.",
      toolCalls: [
        { name: "ls", arguments: {} },
        { name: "read", arguments: { path: "data/sales.csv" } },
      ],
    },
    {
      text: "Each row is one sale with a region and an amount. I'll write a script that totals the amounts per region.",
      delayMs: SLOW,
      toolCalls: [{ name: "write", arguments: { path: "summarize.py", content: SUMMARIZE } }],
    },
    {
      text: "Let me run it in the shell.",
      delayMs: SLOW,
      toolCalls: [{ name: "bash", arguments: { command: "python3 summarize.py data/sales.csv" } }],
    },
    {
      text: "It works. I'll sort the regions by total, print a Markdown table and save it as report.md.",
      delayMs: SLOW,
      toolCalls: [
        {
          name: "edit",
          arguments: {
            path: "summarize.py",
            edits: [
              {
                oldText: '    for region, total in totals(sys.argv[1]).items():\n        print(f"{region:<6} {total:>5}")',
                newText:
                  '    rows = sorted(totals(sys.argv[1]).items(), key=lambda kv: -kv[1])\n    print("| region | total |")\n    print("|---|--:|")\n    for region, total in rows:\n        print(f"| {region} | {total} |")',
              },
            ],
          },
        },
        { name: "bash", arguments: { command: "python3 summarize.py data/sales.csv > report.md && cat report.md" } },
      ],
    },
    {
      delayMs: SLOW,
      text: `**East** sold the most (350), then West (300), North (295) and South (245): 1,190 in all.

What I did:

1. Read \`data/sales.csv\`: 12 sales in 4 regions.
2. Wrote \`summarize.py\`, which totals the \`amount\` column per region with the \`csv\` module.
3. Ran it with \`python3\` in the shell, sorted the regions and saved the table to **report.md**:

| region | total |
|---|--:|
| East | 350 |
| West | 300 |
| North | 295 |
| South | 245 |

Open \`report.md\` or \`summarize.py\` in the files panel to read them.`,
    },
    // Run 2: a test.
    {
      text: "I'll add a small test that builds its own CSV in a temporary file.",
      delayMs: SLOW,
      toolCalls: [{ name: "write", arguments: { path: "test_summarize.py", content: TEST } }],
    },
    {
      text: "Now I run it, and list the functions in the workspace.",
      delayMs: SLOW,
      toolCalls: [{ name: "bash", arguments: { command: "python3 test_summarize.py && grep -n 'def ' *.py" } }],
    },
    {
      delayMs: SLOW,
      text: "The test passes: `test_summarize.py` checks `totals()` on a three-row CSV (`A` → 7, `B` → 3). Run it again any time with `python3 test_summarize.py`.",
    },
    // Any later prompt.
    {
      delayMs: SLOW,
      text: `That's the end of this offline demo. The model here is **scripted**: it replays a fixed conversation, so it can't answer new questions (the tools, the files and the shell are real, though).

To talk to a real model, open **Settings** at the top right, or restart \`make demo\` with \`OPENAI_API_KEY\` or \`ANTHROPIC_API_KEY\` set.`,
    },
  ];
}
