export { addMessageUsage } from "../../machines/session.helpers.js";
