async () => {
const x = 42
}