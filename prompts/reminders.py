"""What the reminder tools answer the model, and how a reminder is said when it comes."""

DUE = "⏰ Reminder: {what}"
SET = "Reminder set for {due} (id {id}): {what}"
UNREAD_WHEN = (
    "Error: no time found in {when!r}; give a day and/or a time such as 'in 10 minutes', "
    "'Friday at 8' or '明天下午3点'."
)
NO_THREAD = (
    "Error: this run has no thread to say a reminder in; tell the user a reminder needs a "
    "conversation thread."
)
NONE_SET = "No reminder is set in this conversation."
NOT_FOUND = "Error: no reminder with id {id!r}; list_reminders shows the ids."
