// The libnl 3 headers netpath uses, plus small inline wrappers for what Swift 6 cannot import:
// variadic or macro-only APIs, and headers Glibc's module map leaves out.
#ifndef NETPATH_CNETLINK_SHIM_H
#define NETPATH_CNETLINK_SHIM_H

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/object.h>
#include <netlink/socket.h>
#include <netlink/route/rtnl.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>

#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/netlink.h>

#include <errno.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

// setns(2) and CLONE_NEWNET are declared by <sched.h> only under _GNU_SOURCE, and defining that
// here changes fd_set's layout so this module no longer agrees with Swift's Glibc module.
// Declare the one prototype instead (glibc >= 2.14 exports it).
extern int setns(int fd, int nstype);

/// `setns(2)`: move the calling thread into another namespace.
static inline int np_setns(int fd, int nstype) { return setns(fd, nstype); }

/// `CLONE_NEWNET` from <linux/sched.h>.
static inline int np_clone_newnet(void) { return 0x40000000; }

/// `eventfd(2)`: `sys/eventfd.h` is not in Glibc's module map.
static inline int np_eventfd(unsigned int initval, int flags) { return eventfd(initval, flags); }
static inline int np_efd_cloexec(void) { return EFD_CLOEXEC; }
static inline int np_efd_nonblock(void) { return EFD_NONBLOCK; }

/// `SO_RCVBUFFORCE` lets root lift the receive buffer above `net.core.rmem_max`.
static inline int np_so_rcvbufforce(void) { return SO_RCVBUFFORCE; }

/// The netlink header of a message (macro-free access for Swift).
static inline unsigned short np_msg_type(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_type; }
static inline unsigned short np_msg_flags(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_flags; }

/// The `ifi_family` byte as it came off the wire: libnl rewrites the object's family for some
/// link messages, and bridge-port notifications (AF_BRIDGE) must not be mistaken for links.
static inline int np_link_wire_family(struct nl_msg *msg) {
    struct nlmsghdr *nlh = nlmsg_hdr(msg);
    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return -1;
    return ((struct ifinfomsg *)NLMSG_DATA(nlh))->ifi_family;
}

#endif
