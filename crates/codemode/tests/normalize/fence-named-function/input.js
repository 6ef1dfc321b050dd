```js
async function run() { return await codemode.searchWeb({ query: 'test' }); }
```