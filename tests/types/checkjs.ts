// Compiled by `tsc -p tests/types/tsconfig.checkjs.json` (make lint), never run: each
// public export of the .mjs modules has the type its hand-kept .d.ts publishes, so a
// signature changed in one and not in the other fails. Functions are checked both ways
// (the module's where the .d.ts's is expected and back); classes one way, since a
// module's class has members that the .d.ts does not publish.
import type * as PageApi from "../../embed/page/pyharness.d.ts";
import * as page from "../../embed/page/pyharness.mjs";
import type * as WidgetApi from "../../embed/widget/widget.d.ts";
import * as widget from "../../embed/widget/widget.mjs";

declare const published: {
  createHarness: typeof PageApi.createHarness;
  listWorkspaces: typeof PageApi.listWorkspaces;
  deleteWorkspace: typeof PageApi.deleteWorkspace;
};

export const asPublished: {
  createHarness: typeof PageApi.createHarness;
  listWorkspaces: typeof PageApi.listWorkspaces;
  deleteWorkspace: typeof PageApi.deleteWorkspace;
  HarnessError: typeof PageApi.HarnessError;
  PyharnessChat: typeof WidgetApi.PyharnessChat;
} = {
  createHarness: page.createHarness,
  listWorkspaces: page.listWorkspaces,
  deleteWorkspace: page.deleteWorkspace,
  HarnessError: page.HarnessError,
  PyharnessChat: widget.PyharnessChat,
};

export const asImplemented: {
  createHarness: typeof page.createHarness;
  listWorkspaces: typeof page.listWorkspaces;
  deleteWorkspace: typeof page.deleteWorkspace;
} = published;
