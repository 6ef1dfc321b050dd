type StatusInput = {
    status?: "active" | "inactive" | "pending";
}