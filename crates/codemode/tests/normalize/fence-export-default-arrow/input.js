```js
export default async () => { return 1; }
```