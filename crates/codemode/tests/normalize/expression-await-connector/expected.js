async () => {
const r = await github.list_issues({ repo: 'x' });
return (r.length)
}