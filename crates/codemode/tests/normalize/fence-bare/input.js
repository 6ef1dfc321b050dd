```
async () => { return 1; }
```