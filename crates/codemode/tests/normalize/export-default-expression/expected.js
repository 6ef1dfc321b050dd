async () => {
return (42)
}