const r = await github.list_issues({ repo: 'x' });
r.length