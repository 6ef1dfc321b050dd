```js
async () => { return 1; }