const s = await codemode.search('create issue'); const d = await codemode.describe(42); return [s, d]
