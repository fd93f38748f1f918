def test_boot_and_read(app):
    result = app.evaluate("""async () => {
      const steps = [];
      const h = await pyharness.createHarness({model: {api: "scripted", turns: []}, onProgress: (p) => steps.push(p)});
      await h.fs.writeFile("a.txt", "hello");
      const text = await h.fs.readFile("a.txt", {encoding: "utf8"});
      h.close();
      return {text, steps, versions: h.versions};
    }""")
    print(result)
    assert result["text"] == "hello"
