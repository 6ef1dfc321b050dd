async () => {
```js
async () => { return 1; }
}