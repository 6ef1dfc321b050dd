async () => {
// sum
return (1 + 1)
}